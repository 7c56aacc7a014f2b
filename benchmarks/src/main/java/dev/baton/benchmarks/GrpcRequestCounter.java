package dev.baton.benchmarks;

import io.etcd.jetcd.api.WatchResponse;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.ForwardingClientCallListener.SimpleForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts the request messages a jetcd client sends: one per unary call, one per message on a stream
 * (each lease keep-alive, each watch request). Server pushes are not requests. Logs every message
 * each way, too ({@link #log()}), at the time the client hands it to gRPC or gets it back.
 */
final class GrpcRequestCounter implements ClientInterceptor {

  /** etcd's methods that write through raft. */
  private static final Set<String> WRITES =
      Set.of("Put", "DeleteRange", "Txn", "Compact", "LeaseGrant", "LeaseRevoke", "Resign");

  private final AtomicLong messages = new AtomicLong();
  private final WireLog log = new WireLog();

  long messages() {
    return messages.get();
  }

  WireLog log() {
    return log;
  }

  @Override
  public <Q, A> ClientCall<Q, A> interceptCall(
      MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
    String name = method.getBareMethodName();
    boolean write = WRITES.contains(name);
    return new SimpleForwardingClientCall<>(next.newCall(method, options)) {
      @Override
      public void start(Listener<A> answers, Metadata headers) {
        super.start(
            new SimpleForwardingClientCallListener<>(answers) {
              @Override
              public void onMessage(A message) {
                log.add(System.nanoTime(), kindOf(name, message), name, false);
                super.onMessage(message);
              }
            },
            headers);
      }

      @Override
      public void sendMessage(Q message) {
        messages.incrementAndGet();
        log.add(System.nanoTime(), WireLog.Kind.REQUEST, name, write);
        super.sendMessage(message);
      }
    };
  }

  /** A watch response with events, or a campaign's answer, tells of a change; others answer. */
  private static WireLog.Kind kindOf(String method, Object message) {
    if (message instanceof WatchResponse w) {
      return w.getEventsCount() > 0 ? WireLog.Kind.EVENT : WireLog.Kind.ANSWER;
    }
    return method.equals("Campaign") ? WireLog.Kind.EVENT : WireLog.Kind.ANSWER;
  }
}
