# elect's guard: runs COMMAND in a process group of its own and makes sure that whole group ends
# when elect asks (SIGTERM: the group gets SIGTERM, then SIGKILL after the grace period) and when
# elect dies (SIGHUP, armed as the parent-death signal by setpriv: the group gets SIGKILL at once).
# A process that leaves the group (setsid, daemonizing) leaves elect's control.
# Arguments: elect's pid, the grace period in milliseconds, COMMAND [ARGS...].
elect_pid=$1
grace_ms=$2
shift 2
cmd=

# True while a process of the group is alive; zombies do not count (an init that reaps slowly, or
# none at all in a container, would otherwise make every stop wait out the grace period).
if command -v pgrep >/dev/null 2>&1; then
  group_alive() { pgrep -g "$cmd" -r R,S,D,T,t,W,P,I >/dev/null 2>&1; }
else
  group_alive() { kill -0 -- -"$cmd" 2>/dev/null; }
fi

# $1: grace in milliseconds, $2: exit status
stop_group() {
  cmd=${cmd:-$!}
  [ -n "$cmd" ] || exit "$2"
  kill -TERM -- -"$cmd" 2>/dev/null
  n=$(( ($1 + 49) / 50 ))
  while [ "$n" -gt 0 ] && group_alive; do
    sleep 0.05
    n=$((n - 1))
  done
  kill -KILL -- -"$cmd" 2>/dev/null
  exit "$2"
}

trap 'stop_group "$grace_ms" 143' TERM
trap 'cmd=${cmd:-$!}; [ -z "$cmd" ] || kill -KILL -- -"$cmd" 2>/dev/null; exit 129' HUP
# The terminal's signals are elect's: it stops the command in its own time.
trap '' INT QUIT
# elect died before its death signal was armed: the command must not start.
[ "$PPID" = "$elect_pid" ] || exit 129

# Not a group leader here, so setsid(1) does not fork: $! is the command, its group and its session.
# A background job would read /dev/null; the command gets elect's standard input instead.
setsid -- "$@" 0<&0 &
cmd=$!
wait "$cmd"
status=$?
# The command ended on its own; what it left running in its group goes too.
if group_alive; then
  stop_group "$grace_ms" "$status"
fi
exit "$status"
