package dev.baton.benchmarks;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.MethodDescriptor;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts the request messages a jetcd client sends: one per unary call, one per message on a stream
 * (each lease keep-alive, each watch request). Server pushes are not requests.
 */
final class GrpcRequestCounter implements ClientInterceptor {

  private final AtomicLong messages = new AtomicLong();

  long messages() {
    return messages.get();
  }

  @Override
  public <Q, A> ClientCall<Q, A> interceptCall(
      MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
    return new SimpleForwardingClientCall<>(next.newCall(method, options)) {
      @Override
      public void sendMessage(Q message) {
        messages.incrementAndGet();
        super.sendMessage(message);
      }
    };
  }
}
