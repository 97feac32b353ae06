package io.delayedtask.operator.schedule;

import io.lettuce.core.cluster.SlotHash;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;

/**
 * The Redis key layout of the schedule (see package-info). Each shard's keys carry one hash tag, so
 * one script's keys share a Redis Cluster slot, and the tags are chosen so that the shards' slots
 * spread evenly over the slot space: shard i of N hashes into the i-th of N equal slot ranges, so N
 * shards land on N different masters of a cluster whose slots are split evenly (as {@code redis-cli
 * --cluster create} splits them). The tag is {@code <i>} when that already holds (always for one
 * shard: {@code <prefix>:{0}:due}), else {@code <i>-<k>} for the smallest k that does.
 */
public final class ScheduleKeys {
  private final String prefix;
  private final int shards;
  private final String[] tags;

  public ScheduleKeys(String prefix, int shards) {
    if (prefix == null || prefix.isBlank() || prefix.contains("{") || prefix.contains("}")) {
      throw new IllegalArgumentException(
          "key prefix '" + prefix + "' must be non-blank and without braces");
    }
    if (shards < 1 || shards > 1024) {
      throw new IllegalArgumentException("shards must be from 1 to 1024, got " + shards);
    }
    this.prefix = prefix;
    this.shards = shards;
    this.tags = new String[shards];
    for (int shard = 0; shard < shards; shard++) {
      tags[shard] = tag(shard, shards);
    }
  }

  /**
   * The hash tag of shard {@code shard} of {@code shards}: deterministic, so every process agrees.
   */
  static String tag(int shard, int shards) {
    int from = (int) ((long) shard * SlotHash.SLOT_COUNT / shards);
    int to = (int) ((long) (shard + 1) * SlotHash.SLOT_COUNT / shards);
    String candidate = Integer.toString(shard);
    for (int k = 0; !inRange(SlotHash.getSlot(candidate), from, to); k++) {
      candidate = shard + "-" + k;
    }
    return candidate;
  }

  private static boolean inRange(int slot, int from, int to) {
    return slot >= from && slot < to;
  }

  public String prefix() {
    return prefix;
  }

  public int shards() {
    return shards;
  }

  /**
   * Stable across processes and restarts: CRC32 of the id's UTF-8 bytes, modulo the shard count.
   */
  public int shardOf(String id) {
    CRC32 crc = new CRC32();
    crc.update(id.getBytes(StandardCharsets.UTF_8));
    return (int) (crc.getValue() % shards);
  }

  /** ZSET of waiting entries: member = id, score = due time in ms. */
  public String due(int shard) {
    return prefix + ":{" + tags[shard] + "}:due";
  }

  /** ZSET of claimed entries: member = id, score = lease deadline in ms (Redis clock). */
  public String inFlight(int shard) {
    return prefix + ":{" + tags[shard] + "}:inflight";
  }

  /**
   * HASH id -> due score each in-flight entry was claimed for (restored when its lease expires).
   */
  public String claimed(int shard) {
    return prefix + ":{" + tags[shard] + "}:claimed";
  }

  /**
   * HASH id -> token of each in-flight entry's current claim (what acknowledges or releases it).
   */
  public String tokens(int shard) {
    return prefix + ":{" + tags[shard] + "}:tokens";
  }

  /** Counter the claim tokens of a shard are numbered by, so no two claims share a token. */
  public String claimSequence(int shard) {
    return prefix + ":{" + tags[shard] + "}:claimseq";
  }

  /**
   * The hash tag of a queue's key group: {@code q:<namespace>/<name>}, so every key of one queue
   * shares a Redis Cluster slot, apart from the shards' (package-info, "Queues").
   */
  public String queueGroup(QueueRef queue) {
    return prefix + ":{q:" + queue + "}";
  }

  /** ZSET of a queue's waiting entries: member = id, score = due time in ms. */
  public String due(QueueRef queue) {
    return queueGroup(queue) + ":due";
  }

  /** ZSET of a queue's claimed entries: member = id, score = lease deadline in ms. */
  public String inFlight(QueueRef queue) {
    return queueGroup(queue) + ":inflight";
  }

  /** HASH id -> due score each of a queue's claims was made for. */
  public String claimed(QueueRef queue) {
    return queueGroup(queue) + ":claimed";
  }

  /** HASH id -> token of each of a queue's claims. */
  public String tokens(QueueRef queue) {
    return queueGroup(queue) + ":tokens";
  }

  /** Counter a queue's claim tokens are numbered by. */
  public String claimSequence(QueueRef queue) {
    return queueGroup(queue) + ":claimseq";
  }

  /** HASH of a queue's token bucket: tokens, at (ms, Redis clock), dispatched (total). */
  public String bucket(QueueRef queue) {
    return queueGroup(queue) + ":bucket";
  }

  /**
   * ZSET of a queue's dispatches in flight (its concurrency): member = id, score = when it began
   * (ms).
   */
  public String running(QueueRef queue) {
    return queueGroup(queue) + ":running";
  }

  /** STRING set while a queue's DelayedTaskQueue is deleted: its tasks fire without limits. */
  public String released(QueueRef queue) {
    return queueGroup(queue) + ":released";
  }

  /**
   * Pub/sub channel on which "score origin" is published when an entry becomes its shard's
   * earliest.
   */
  public String wakeupChannel() {
    return prefix + ":wakeup";
  }
}
