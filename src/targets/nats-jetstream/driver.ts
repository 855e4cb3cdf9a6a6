// The nats-jetstream target's driver: node dist/src/targets/nats-jetstream/driver.js, specs on stdin
// (docs/driver-protocol.md). It starts nats-server as its own child for each spec (its store on the
// mount), so the harness's SIGKILL of the driver's process group at a cut takes the server down too.
import { runNodeDriver } from '../node-driver.js';
import { NatsQueue } from './queue.js';
import { natsContract, natsMaxEventBytes } from './settings.js';

runNodeDriver({
  target: 'nats-jetstream',
  open: (spec, emit) => NatsQueue.open(spec, emit),
  contract: () => natsContract(),
  maxEventBytes: (settings) => natsMaxEventBytes(settings),
});
