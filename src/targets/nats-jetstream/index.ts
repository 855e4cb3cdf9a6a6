// NATS JetStream (nats-server 2.9.10, file storage) as a target: its driver starts the server with
// the store on the mount, publishes, fetches and acks through a durable pull consumer, and restarts
// it on the crashed image to drain (docs/nats.md).
import fc from 'fast-check';
import type { TraceEntry } from '../../../fusefs/protocol.js';
import { ownNodeCommand } from '../../harness/dist-path.js';
import { PAYLOAD_HEADER_BYTES } from '../../harness/payload.js';
import { eventSizes, mapEventSizes, type Workload } from '../../harness/workload.js';
import type { Target, TargetSettings } from '../../harness/target.js';
import { checkNatsEnvironment } from './env.js';
import {
  DEFAULT_NATS_SETTINGS,
  DRAIN_RESERVE_BYTES,
  natsContract,
  natsMaxEventBytes,
  natsSettings,
  PER_MESSAGE_OVERHEAD_BYTES,
  RETENTIONS,
  SMALL_BLOCKS_MAX_BYTES,
} from './settings.js';

const { serverConfig: _serverConfig, replicas: _replicas, ...DEFAULTS_DRAWN } = DEFAULT_NATS_SETTINGS;

const settingsArb: fc.Arbitrary<TargetSettings> = fc
  .record({
    pubAckDurable: fc.boolean(),
    smallBlocks: fc.boolean(),
    maxMsgSize: fc.constantFrom(-1, 1_024, 8_192, 65_536),
    retention: fc.constantFrom(...RETENTIONS),
    extraConsumers: fc.integer({ min: 0, max: 2 }),
    extraConsumersAck: fc.boolean(),
    msgId: fc.boolean(),
    duplicateWindowMs: fc.constantFrom(0, 100, 60_000),
  })
  // A work queue stream takes one unfiltered consumer.
  .map((s) => (s.retention === 'workqueue' ? { ...s, extraConsumers: 0 } : s));

/**
 * Events cut to the largest message the stream takes; with smallBlocks, the whole workload made to
 * fit the stream's max_bytes (with the liveness writes of up to three drains on top) by shrinking
 * every event by one factor: a full stream refuses publishes (discard new), which is no durability bug.
 */
export function fitNatsWorkload(workload: Workload, settings: TargetSettings): Workload {
  const max = natsMaxEventBytes(settings);
  const capped = mapEventSizes(workload, (sizes) => sizes.map((n) => Math.min(n, max)));
  if (!natsSettings(settings).smallBlocks) return capped;
  const sizes = eventSizes(capped);
  const budget = SMALL_BLOCKS_MAX_BYTES - DRAIN_RESERVE_BYTES - sizes.length * PER_MESSAGE_OVERHEAD_BYTES;
  const total = sizes.reduce((a, b) => a + b, 0);
  if (total <= budget) return capped;
  // No event below the payload's header, which names the event.
  const factor = Math.max(0, budget) / total;
  return mapEventSizes(capped, (ss) => ss.map((n) => Math.max(PAYLOAD_HEADER_BYTES, Math.floor(n * factor))));
}

const BLK = /\/msgs\/\d+\.blk$/;
const IDX = /\/msgs\/\d+\.idx$/;
const FSS = /\/msgs\/\d+\.fss$/;
const ODAT = /\/obs\/[^/]+\/o\.dat$/;
const STREAM_META = /\/streams\/[^/]+\/meta\.inf$/;
const CONSUMER_META = /\/obs\/[^/]+\/meta\.inf$/;
// A clustered server's Raft groups (the meta group, each stream's and consumer's) live under $SYS/_js_/<group>/.
const RAFT_GROUP = /\/_js_\/[^/]+$/;
const RAFT_TERM_VOTE = /\/_js_\/[^/]+\/tav\.idx$/;
const RAFT_PEERS = /\/_js_\/[^/]+\/peers\.idx$/;
const RAFT_SNAPSHOT = /\/_js_\/[^/]+\/snapshots\/snap\.[^/]+$/;

/** What the server did in a run, from its requests: blocks made and removed, index, state and meta writes, fsyncs. */
export function natsWorkloadEvents(trace: readonly TraceEntry[]): Record<string, number> {
  const ok = trace.filter((e) => e.result === 0);
  const count = (kind: TraceEntry['kind'], re: RegExp) => ok.filter((e) => e.kind === kind && re.test(e.path)).length;
  return {
    'blocks created': count('create', BLK),
    'blocks removed': count('unlink', BLK),
    '.blk writes': count('write', BLK),
    '.idx writes': count('write', IDX),
    '.fss writes': count('write', FSS),
    'o.dat writes': count('write', ODAT),
    'stream meta writes': count('write', STREAM_META),
    'consumer meta writes': count('write', CONSUMER_META),
    'streams created': count('mkdir', /\/streams\/[^/]+$/),
    'consumers created': count('mkdir', /\/obs\/[^/]+$/),
    '.blk fsyncs': count('fsync', BLK),
    'directory fsyncs': ok.filter((e) => e.kind === 'fsyncdir').length,
    // A cluster's: each write of a group's term and vote is an election's (a vote cast or a term
    // begun), so steering can favour workloads whose runs changed leaders.
    'Raft groups created': count('mkdir', RAFT_GROUP),
    'Raft term and vote writes': count('write', RAFT_TERM_VOTE),
    'Raft peer state writes': count('write', RAFT_PEERS),
    'Raft snapshots': count('create', RAFT_SNAPSHOT),
  };
}

export const natsJetstream: Target = {
  name: 'nats-jetstream',
  summary: 'NATS JetStream (nats-server 2.9.10, file storage): publish, a durable pull consumer with explicit acks; a PubAck taken as durable, as NATS documents it',
  get driver() {
    return ownNodeCommand('src/targets/nats-jetstream/driver.js');
  },
  contract: () => natsContract(),
  checkSettings: (settings) => void natsSettings(settings, { strict: true }),
  checkEnvironment: checkNatsEnvironment,
  settingsArb,
  suites: [
    // What a user gets: one consumer, limits retention, 8 MiB blocks, a PubAck as the durability confirmation.
    { name: 'default', settings: DEFAULTS_DRAWN },
    // 32000-byte blocks: a new .blk every ~32 KB, so rollovers (and the never-fsynced old block) in every run.
    { name: 'small-blocks', settings: { smallBlocks: true } },
    // Nothing claimed from a PubAck: only what the driver fsynced itself, and what the recovered server reports.
    { name: 'claims-off', settings: { pubAckDurable: false } },
    // Interest retention with two more consumers acking in step: messages removed once all acked them.
    { name: 'interest-consumers', settings: { retention: 'interest', extraConsumers: 2, extraConsumersAck: true } },
  ],
  fitWorkload: fitNatsWorkload,
  // Message blocks (writes, creation, fsyncs), consumer state, meta files, and the renames and
  // directory fsyncs 2.9.10 never makes (a cut aimed there falls back to any request).
  cutTargets: [
    { kind: 'write', path: '**/*.blk' },
    { kind: 'create', path: '**/*.blk' },
    { kind: 'fsync', path: '**/*.blk' },
    { kind: 'write', path: '**/o.dat' },
    { kind: 'write', path: '**/meta.inf' },
    { kind: 'rename' },
    { kind: 'fsyncdir' },
  ],
  faultPaths: ['**/*.blk', '**/*.idx', '**/meta.*', '**/o.dat'],
  // Every message record carries a hash and meta.inf a checksum file: NATS claims to notice damage.
  detectsDamage: true,
  knownBad: {},
  // replicas 3: three servers, one per node of a cluster case (src/harness/cluster/).
  nodeCount: (settings) => natsSettings(settings).replicas,
  // A state's recovery waits on three elections (4 to 9 s each in 2.9.10), not on the CPU. States a
  // minute on 2 cores (`node dist/bench/nats-cluster.js states --workload long --settings
  // '{"replicas":3,"pubAckDurable":false}' --max-per-kind 80 --slots K`, 160 states): K=40 164,
  // K=64 196 (with 60 states, K=12 57, K=40 90: the last wave's stragglers weigh more). About 10 %
  // of the states failed at each K (elections decide: finding 3), so the load does not make them.
  clusterStateSlots: 48,
  workloadEvents: natsWorkloadEvents,
  // The server runs its own goroutines (flushes, Raft): every recording may interleave anew.
  interleaves: () => true,
};
