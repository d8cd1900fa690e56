package io.slipstream.server.api;

import io.slipstream.api.codec.Json;
import io.slipstream.api.wire.ErrorView;
import java.nio.ByteBuffer;
import java.util.List;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * Errors that Jetty answers itself, before a request reaches a route (a request line or headers too large, a path with
 * an encoded NUL or bytes that are not UTF-8), in the API's error body instead of an HTML page: the same
 * {@link ErrorView} as every other error, with Jetty's reason as the message.
 */
final class JsonErrorHandler extends ErrorHandler {
    @Override
    protected void generateResponse(Request request, Response response, int code, String message, Throwable cause, Callback callback) {
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        // Jetty drops the connection after such a request without saying so; a client that knows opens a new one.
        response.getHeaders().put(HttpHeader.CONNECTION, "close");
        response.write(true, ByteBuffer.wrap(body(code, message)), callback);
    }

    @Override
    public ByteBuffer badMessageError(int status, String reason, HttpFields.Mutable fields) {
        fields.put(HttpHeader.CONTENT_TYPE, "application/json");
        fields.put(HttpHeader.CONNECTION, "close");
        return ByteBuffer.wrap(body(status, reason));
    }

    private static byte[] body(int status, String reason) {
        String message = reason == null || reason.isBlank() ? HttpStatus.getMessage(status) : reason;
        return Json.mapper().writeValueAsBytes(new ErrorView(status, ErrorResponses.codeOf(status), message, List.of()));
    }

}
