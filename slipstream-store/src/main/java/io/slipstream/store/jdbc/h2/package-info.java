/**
 * What an H2 database file in this process needs beyond JDBC to be trusted, all of it H2's alone: the embedded store's
 * place, settings and checks at open ({@link io.slipstream.store.jdbc.h2.EmbeddedH2}: read whole, every index against
 * its table, {@link io.slipstream.store.jdbc.h2.H2Indexes}), its backup ({@link io.slipstream.store.jdbc.h2.H2Backup}),
 * each commit made findable after a crash ({@link io.slipstream.store.jdbc.h2.H2NewestChunk}), one writing
 * transaction at a time ({@link io.slipstream.store.jdbc.h2.OneWriterAtATime}), and the commits made meanwhile written
 * together, each acknowledged once written ({@link io.slipstream.store.jdbc.h2.H2GroupCommit}). The JDBC store uses these; they never
 * name it (what opens a store at a URL is given to them), so its SQL reads the same for H2 and PostgreSQL.
 * docs/operations.md ("Stores") says why each is there.
 */
package io.slipstream.store.jdbc.h2;
