package dev.baton.benchmarks;

import dev.baton.testservers.CrudMockDispatcher;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.crud.AttributeSet;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * fabric8's Kubernetes mock API server in CRUD mode on loopback (no API server can run here): it
 * keeps resourceVersions, answers a stale update with 409 and serves watches, like a real one. It
 * counts the requests it receives per User-Agent, which the harness sets to the node's id.
 *
 * <p>The dispatcher is the tests' {@link CrudMockDispatcher}, which hands the mock's watch-close
 * handling to a thread of its own so a closing watch never holds an event loop; besides, an event
 * that a closing watch refuses is offered again, from a thread of the harness's, so that it does
 * not fail the request that caused it, and so that the watches after the closing one get it.
 */
final class KubernetesMock implements AutoCloseable {

  /** The mock logs every request through java.util.logging; kept referenced so the level sticks. */
  private static final java.util.logging.Logger MOCK_LOG =
      java.util.logging.Logger.getLogger("io.fabric8.mockwebserver");

  private final KubernetesMockServer server;
  private final CrudMockDispatcher dispatcher;
  private final Map<String, AtomicLong> requestsByAgent = new ConcurrentHashMap<>();
  private final AtomicLong requests = new AtomicLong();
  private final AtomicLong eventRetries = new AtomicLong();
  private final AtomicLong eventFailures = new AtomicLong();

  /** Held while the mock handles a request, and while an event is offered again. */
  private final Object stored = new Object();

  private final ExecutorService offerAgain =
      Executors.newSingleThreadExecutor(
          r -> {
            Thread t = new Thread(r, "kubernetes-mock-offer-again");
            t.setDaemon(true);
            return t;
          });

  private KubernetesMock() {
    MOCK_LOG.setLevel(java.util.logging.Level.WARNING);
    dispatcher =
        new CrudMockDispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) {
            requests.incrementAndGet();
            String agent = request.getHeader("User-Agent");
            if (agent != null) {
              requestsByAgent.computeIfAbsent(agent, a -> new AtomicLong()).incrementAndGet();
            }
            synchronized (stored) {
              return super.dispatch(request);
            }
          }

          /**
           * A watch that is closing refuses new events (its sender is shut down) until the mock
           * forgets it. The refusal ends the mock's loop over the watches, so those after the
           * closing one miss the event (the departing leader's watch closes just as its release
           * goes out, so the followers would never hear of the release), and it fails the request
           * that caused it. The new state is stored by then, and the mock sends nothing for a state
           * it already has; so the harness offers it again as if it were new (ADDED) to every watch
           * it matches, once the closing watch is gone, unless a newer state came first. That
           * waiting happens on a thread of the harness's, never on the event loop, whose writes the
           * closing watch may be waiting for. A watch that already had the event sees it twice,
           * which watches must tolerate anyway. A deletion is not offered again.
           */
          @Override
          public void processEvent(
              String path,
              AttributeSet pathAttributes,
              AttributeSet oldAttributes,
              GenericKubernetesResource resource,
              String newState) {
            try {
              super.processEvent(path, pathAttributes, oldAttributes, resource, newState);
            } catch (RejectedExecutionException e) {
              eventRetries.incrementAndGet();
              if (newState == null) {
                eventFailures.incrementAndGet();
                return;
              }
              offerAgain.execute(() -> offerAgain(path, pathAttributes, resource, newState));
            }
          }

          private void offerAgain(
              String path,
              AttributeSet pathAttributes,
              GenericKubernetesResource resource,
              String newState) {
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (System.nanoTime() - deadline < 0) {
              Pause.millis(1);
              synchronized (stored) {
                if (!map.containsValue(newState)) {
                  return; // superseded: the newer state reaches the watches instead
                }
                try {
                  super.processEvent(
                      path,
                      pathAttributes,
                      null,
                      resource,
                      newState); // no old state: every watch it matches hears it
                  return;
                } catch (RejectedExecutionException e) {
                  eventRetries.incrementAndGet();
                }
              }
            }
            eventFailures.incrementAndGet();
          }
        };
    server =
        new KubernetesMockServer(
            new Context(), new MockWebServer(), new HashMap<>(), dispatcher, false);
    server.init(InetAddress.getLoopbackAddress(), 0);
  }

  static KubernetesMock start() {
    return new KubernetesMock();
  }

  InetSocketAddress address() {
    URI url = URI.create(server.url("/"));
    return new InetSocketAddress(InetAddress.getLoopbackAddress(), url.getPort());
  }

  /** Requests received from clients whose User-Agent is {@code agent}. */
  long requestsFrom(String agent) {
    AtomicLong n = requestsByAgent.get(agent);
    return n == null ? 0 : n.get();
  }

  long requests() {
    return requests.get();
  }

  /** Watch events the mock could not deliver even after trying again. */
  long eventFailures() {
    return eventFailures.get();
  }

  /**
   * Stops the server, waiting at most 40 s: the mock can hold an event loop for 30 s when a watch
   * closes while it sends an event (its listener waits for its sender, which waits for the loop).
   */
  @Override
  public void close() throws InterruptedException {
    offerAgain.shutdownNow();
    dispatcher.close();
    Thread stopper = new Thread(server::destroy, "kubernetes-mock-stop");
    stopper.setDaemon(true);
    stopper.start();
    stopper.join(40_000);
    if (stopper.isAlive()) {
      throw new IllegalStateException("the Kubernetes mock server did not stop within 40 s");
    }
  }
}
