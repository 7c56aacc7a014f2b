# elect's guard: runs COMMAND in a process group of its own and makes sure that whole group ends
# - when elect asks (SIGTERM: the group gets SIGTERM, then SIGKILL after the grace period);
# - when elect dies (SIGHUP, armed as the parent-death signal by setpriv, or the end of the pipe
#   on standard input: the group gets SIGKILL at once);
# - when the term's deadline passes without a word from elect (the dead-man's switch, for an elect
#   that is alive but cannot act: a JVM frozen by SIGSTOP, a long GC pause, swapping): SIGTERM,
#   then SIGKILL after the grace period, before the lease can go to another candidate.
# elect writes on standard input, after each confirmed renewal, the time until which the term is
# valid: one number per line, in hundredths of a second of /proc/uptime (CLOCK_BOOTTIME: it never
# jumps, every process on the machine reads the same, and it runs on through a suspend). An
# absolute time, not a duration: a line that waited in the pipe while the guard was paused with
# elect cannot push the deadline later than elect meant.
# The guard is bash and nothing else while it waits (no fork, no JVM): it cannot stall as elect can.
# elect starts it in a session of its own (setsid), so that nothing sent to elect's process group or
# terminal reaches it: Ctrl-Z and kill -STOP -PGID stop elect, not the switch that must then act, and
# a hangup is elect's to handle. Its group has no parent in its session, so the kernel drops the
# job-control stops (SIGTSTP, SIGTTIN, SIGTTOU) as well.
# A process that leaves the group (setsid, daemonizing) leaves elect's control.
# When the guard stops the command for its deadline it writes 'deadline' to VERDICT_FILE first, so
# that elect does not take the end for the command's own.
# Arguments: elect's pid, the grace period in milliseconds, VERDICT_FILE, COMMAND [ARGS...].
elect_pid=$1
grace_ms=$2
verdict=$3
shift 3
cmd=

# True while a process of the group is alive; zombies do not count (an init that reaps slowly, or
# none at all in a container, would otherwise make every stop wait out the grace period).
if command -v pgrep >/dev/null 2>&1; then
  group_alive() { pgrep -g "$cmd" -r R,S,D,T,t,W,P,I >/dev/null 2>&1; }
else
  group_alive() { kill -0 -- -"$cmd" 2>/dev/null; }
fi

# Sets now: hundredths of a second since boot, rounded down (so never later than the truth).
clock() {
  read -r up _ </proc/uptime
  now=$((10#${up/./}))
}

# $1: grace in milliseconds, $2: exit status
# The grace is timed by the clock, not counted in looks: on a loaded host each look (a pgrep and a
# sleep) takes longer than it says, and the SIGKILL must still come before the lease can go on.
stop_group() {
  local kill_at left t
  cmd=${cmd:-$!}
  [ -n "$cmd" ] || exit "$2"
  clock
  kill_at=$((now + $1 / 10))
  kill -TERM -- -"$cmd" 2>/dev/null
  while group_alive; do
    clock
    left=$((kill_at - now))
    [ "$left" -gt 0 ] || break
    [ "$left" -le 5 ] || left=5
    printf -v t '%d.%02d' $((left / 100)) $((left % 100))
    sleep "$t"
  done
  kill -KILL -- -"$cmd" 2>/dev/null
  exit "$2"
}

# elect is dead: nobody reads the verdict.
kill_group() {
  cmd=${cmd:-$!}
  [ -z "$cmd" ] || kill -KILL -- -"$cmd" 2>/dev/null
  rm -f -- "$verdict"
  exit 129
}

deadline_passed() {
  echo deadline >"$verdict"
  [ -z "$cmd" ] || echo "elect-guard: the term's deadline passed with no renewal confirmed to the guard: stopping the command's process group (SIGTERM, then SIGKILL after ${grace_ms}ms)" >&2
  stop_group "$grace_ms" 143
}

# Reads the next deadline into $deadline, waiting at most $1 hundredths of a second.
# Returns 0 with a deadline, 1 when elect closed the pipe (it died), 2 on timeout.
next_deadline() {
  local t line got
  printf -v t '%d.%02d' $(($1 / 100)) $(($1 % 100))
  read -r -t "$t" line
  got=$?
  if [ "$got" -gt 128 ]; then
    return 2
  elif [ "$got" -ne 0 ]; then
    return 1
  fi
  case $line in
    '' | *[!0-9]*) echo "elect-guard: unreadable deadline '$line' from elect; stopping the command" >&2; deadline=0 ;;
    *) deadline=$line ;;
  esac
  return 0
}

trap 'stop_group "$grace_ms" 143' TERM
trap 'kill_group' HUP
# Interrupts are elect's: it stops the command in its own time.
trap '' INT QUIT
# elect died before its death signal was armed: the command must not start.
[ "$PPID" = "$elect_pid" ] || kill_group

# The first deadline comes before the command starts, so that it never runs without one.
next_deadline 3000
case $? in 1) kill_group ;; 2) deadline_passed ;; esac
clock
[ "$now" -lt "$deadline" ] || deadline_passed

# Standard input is elect's pipe; the command gets elect's own standard input, opened anew (a
# socket cannot be: then /dev/null).
{ exec 3<"/proc/$elect_pid/fd/0"; } 2>/dev/null || exec 3</dev/null
# Not a group leader here, so setsid(1) does not fork: $! is the command, its group and its session.
setsid -- "$@" 0<&3 3<&- &
cmd=$!
exec 3<&-

# Wakes at least every 0.1 s: to see the deadline pass, and to notice that the command has ended.
while kill -0 "$cmd" 2>/dev/null; do
  clock
  [ "$now" -lt "$deadline" ] || deadline_passed
  left=$((deadline - now))
  [ "$left" -le 10 ] || left=10
  next_deadline "$left"
  [ $? -ne 1 ] || kill_group
done
wait "$cmd"
status=$?
# The command ended on its own; what it left running in its group goes too.
if group_alive; then
  stop_group "$grace_ms" "$status"
fi
exit "$status"
