package io.github.pgidgen;

import java.time.Instant;

/**
 * The grant an {@link EdgeStore} holds (the token is not shown): its window [lo, hi), the
 * Snowflake epoch (null for xid12), the count of the last report, and the high-water mark: the
 * last id made (an {@link Xid}, or a Snowflake id as a {@link Long}; null before the first) and
 * its id-time.
 */
public record EdgeGrant(long grantId, String kind, int slot, Instant lo, Instant hi, Long epochMs, String writer,
        long syncs, Object lastId, Instant lastIdTime) {
}
