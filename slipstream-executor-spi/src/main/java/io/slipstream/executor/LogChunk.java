package io.slipstream.executor;

/** Bytes of an instance's log from some offset; {@code nextOffset} is where the following read starts. */
public record LogChunk(byte[] data, long nextOffset) {
}
