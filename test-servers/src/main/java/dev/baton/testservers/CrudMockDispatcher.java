package dev.baton.testservers;

import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.mockwebserver.http.ByteString;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.Response;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * fabric8's CRUD dispatcher, with one mock-server stall taken out: when a client closes a watch,
 * the mock (mockwebserver 8.0.0, {@code WatchEventsListener.onClosed}) waits on the Vert.x event
 * loop for that watch's pending event sends, and each send waits for its write to complete, which
 * only that same event loop can do. Closing a watch while an event is on its way to it (an elector
 * that releases and then stops watching does exactly that) therefore froze the whole mock server
 * for 30 s, the sends' own timeout. Here a watch's close and failure are handled off the event
 * loop, on one thread of their own; everything else is the mock's own code.
 *
 * <p>Shared by the Kubernetes backend's tests and the benchmarks (which extend it to count
 * requests); the user's classpath brings {@code kubernetes-server-mock}.
 */
public class CrudMockDispatcher extends KubernetesCrudDispatcher implements AutoCloseable {

  private final ExecutorService closer =
      Executors.newSingleThreadExecutor(
          r -> {
            Thread t = new Thread(r, "crud-mock-watch-closer");
            t.setDaemon(true);
            return t;
          });

  @Override
  public MockResponse handleWatch(String path) {
    MockResponse response = super.handleWatch(path);
    WebSocketListener listener = response.getWebSocketListener();
    return listener == null
        ? response
        : response.withWebSocketUpgrade(new ClosingOffTheEventLoop(listener));
  }

  @Override
  public void close() {
    closer.shutdown();
  }

  private final class ClosingOffTheEventLoop extends WebSocketListener {
    private final WebSocketListener watch;

    ClosingOffTheEventLoop(WebSocketListener watch) {
      this.watch = watch;
    }

    @Override
    public void onBeforeAccept(WebSocket webSocket, Response response) {
      watch.onBeforeAccept(webSocket, response);
    }

    @Override
    public void onOpen(WebSocket webSocket, Response response) {
      watch.onOpen(webSocket, response);
    }

    @Override
    public void onMessage(WebSocket webSocket, String text) {
      watch.onMessage(webSocket, text);
    }

    @Override
    @SuppressWarnings(
        "deprecation") // still part of the listener the mock calls; forwarded like the rest
    public void onMessage(WebSocket webSocket, ByteString bytes) {
      watch.onMessage(webSocket, bytes);
    }

    @Override
    public void onMessage(WebSocket webSocket, byte[] bytes) {
      watch.onMessage(webSocket, bytes);
    }

    @Override
    public void onPing(WebSocket webSocket, byte[] bytes) {
      watch.onPing(webSocket, bytes);
    }

    @Override
    public void onClosing(WebSocket webSocket, int code, String reason) {
      watch.onClosing(webSocket, code, reason);
    }

    @Override
    public void onClosed(WebSocket webSocket, int code, String reason) {
      closer.execute(() -> watch.onClosed(webSocket, code, reason));
    }

    @Override
    public void onFailure(WebSocket webSocket, Throwable failure, Response response) {
      closer.execute(() -> watch.onFailure(webSocket, failure, response));
    }
  }
}
