package dev.baton.dynamodb;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

/**
 * A stand-in for DynamoDB on 127.0.0.1 that answers every request as a script says, for faults
 * dynalite cannot make: a retryable error on every request (a 500, throttling), or answers that
 * come slowly. Requests are told apart by their {@code X-Amz-Target} operation name.
 */
final class ScriptedDynamoDb implements AutoCloseable {

  /** What to answer one request: an HTTP status, a JSON body, and how long to wait before. */
  record Answer(int status, String json, Duration after) {

    static Answer ok(String json) {
      return new Answer(200, json, Duration.ZERO);
    }

    /** An error as DynamoDB's JSON protocol sends it, with {@code type} its short name. */
    static Answer error(int status, String type) {
      return new Answer(
          status,
          "{\"__type\":\"com.amazonaws.dynamodb.v20120810#"
              + type
              + "\",\"message\":\"scripted "
              + type
              + "\"}",
          Duration.ZERO);
    }

    Answer after(Duration delay) {
      return new Answer(status, json, delay);
    }
  }

  private final HttpServer server;
  private final ExecutorService threads = Executors.newCachedThreadPool();
  private final List<String> operations = new CopyOnWriteArrayList<>();

  private ScriptedDynamoDb(HttpServer server) {
    this.server = server;
  }

  /** Starts a server that answers each request with what {@code script} gives (operation, body). */
  static ScriptedDynamoDb start(BiFunction<String, String, Answer> script) {
    HttpServer server;
    try {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot listen on 127.0.0.1", e);
    }
    ScriptedDynamoDb scripted = new ScriptedDynamoDb(server);
    server.setExecutor(scripted.threads);
    server.createContext("/", exchange -> scripted.answer(exchange, script));
    server.start();
    return scripted;
  }

  private void answer(HttpExchange exchange, BiFunction<String, String, Answer> script)
      throws IOException {
    try (exchange) {
      String target = String.valueOf(exchange.getRequestHeaders().getFirst("X-Amz-Target"));
      String operation = target.substring(target.indexOf('.') + 1);
      String body = new String(exchange.getRequestBody().readAllBytes(), UTF_8);
      operations.add(operation);
      Answer answer = script.apply(operation, body);
      if (!answer.after().isZero()) {
        try {
          // The slowness under test is the server's own, not a wait for a condition.
          Thread.sleep(answer.after().toMillis());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
      byte[] bytes = answer.json().getBytes(UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "application/x-amz-json-1.0");
      exchange.sendResponseHeaders(answer.status(), bytes.length);
      exchange.getResponseBody().write(bytes);
    }
  }

  InetSocketAddress address() {
    return server.getAddress();
  }

  /** The operations requested so far, in the order they came (SDK retries included). */
  List<String> operations() {
    return List.copyOf(operations);
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
    try {
      if (!threads.awaitTermination(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the scripted server's threads did not end within 10 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
