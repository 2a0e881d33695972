// A private Redis Cluster for e2e tests: startCluster() runs M masters with R
// replicas each (redis-server children in cluster mode, over plain TCP or
// TLS), joins them with `redis-cli --cluster create` and waits until every
// node tells the same story; the handle reads roles and slot owners, reshards,
// fails over, kills and stops. Nodes listen on 127.0.0.1 at random ports in
// 20000-45000 whose cluster bus ports (+10000) are free too. server.mjs tracks
// every process and the temporary directory, so none outlives the test process.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { redisCommands, spawnRedis, tempDir, trackProcess } from './server.mjs';

const REDIS_CLI = process.env.CHESSD_REDIS_CLI ?? 'redis-cli';
const PORT_LOW = 20000;
const PORT_HIGH = 45000;
const BUS_OFFSET = 10000;
export const SLOT_COUNT = 16384;
const NODE_START_ATTEMPTS = 8;
const CLI_TIMEOUT_MS = 60000;
const POLL_MS = 50;
const FORMING_NODE_TIMEOUT_MS = 15000;

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

/** CRC16/XMODEM of a Buffer (Redis's crc16.c). */
function crc16(bytes) {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/**
 * The hash slot of key (a string, taken as UTF-8, or a Buffer), as Redis
 * computes it: CRC16 of the text between the first '{' and the first '}'
 * after it when that is not empty, else of the whole key, mod 16384.
 */
export function keySlot(key) {
  const bytes = Buffer.isBuffer(key) ? key : Buffer.from(String(key));
  const open = bytes.indexOf('{');
  if (open >= 0) {
    const close = bytes.indexOf('}', open + 1);
    if (close > open + 1) return crc16(bytes.subarray(open + 1, close)) % SLOT_COUNT;
  }
  return crc16(bytes) % SLOT_COUNT;
}

/** True when 127.0.0.1:port can be listened on right now. */
function portIsFree(port) {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ port, host: '127.0.0.1', exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

/** A random port in 20000-45000, free with its bus port, that clashes with none of taken (or their bus ports). */
async function pickPort(taken) {
  for (let attempt = 0; attempt < 1000; attempt++) {
    const port = PORT_LOW + Math.floor(Math.random() * (PORT_HIGH - PORT_LOW + 1));
    if (taken.some((p) => p === port || p + BUS_OFFSET === port || p === port + BUS_OFFSET)) continue;
    if (await portIsFree(port) && await portIsFree(port + BUS_OFFSET)) return port;
  }
  return assert.fail(`no free port pair (port, port + ${BUS_OFFSET}) in ${PORT_LOW}-${PORT_HIGH}`);
}

/** Runs redis-cli with args; resolves to its output (colours taken out), fails the test on a non-zero exit. */
function runCli(args, timeoutMs = CLI_TIMEOUT_MS) {
  return new Promise((resolve, reject) => {
    const proc = trackProcess(spawn(REDIS_CLI, args, { stdio: ['ignore', 'pipe', 'pipe'] }));
    let output = '';
    proc.stdout.setEncoding('utf8').on('data', (d) => { output += d; });
    proc.stderr.setEncoding('utf8').on('data', (d) => { output += d; });
    const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
    proc.on('error', (err) => { clearTimeout(timer); reject(new Error(`${REDIS_CLI}: ${err.message} (redis-cli comes with the redis-tools package; set CHESSD_REDIS_CLI)`)); });
    proc.on('exit', (code, signal) => {
      clearTimeout(timer);
      const text = output.replace(/\x1b\[[0-9;]*m/g, ''); // eslint-disable-line no-control-regex
      if (code === 0) resolve(text);
      else reject(new Error(`redis-cli ${args.join(' ')} ended with ${signal ?? `status ${code}`}:\n${text.slice(-3000)}`));
    });
  });
}

/**
 * One node's CLUSTER NODES text, parsed: [{ id, port, master, masterId,
 * failed, myself, slots: [[first, last], ...] }]. Slots being migrated
 * ("[slot->-id]") are not listed: they still belong to their owner's ranges.
 */
export function parseClusterNodes(text) {
  const nodes = [];
  for (const line of text.split('\n')) {
    const fields = line.trim().split(' ');
    if (fields.length < 8) continue;
    const [id, address, flagText, masterId] = fields;
    const flags = flagText.split(',');
    const port = Number(/:(\d+)@/.exec(address)?.[1] ?? 0);
    const slots = fields.slice(8).filter((f) => !f.startsWith('[')).map((f) => {
      const [first, last = first] = f.split('-').map(Number);
      return [first, last];
    });
    nodes.push({
      id, port, master: flags.includes('master'), masterId: masterId === '-' ? null : masterId,
      failed: flags.includes('fail') || flags.includes('fail?'), myself: flags.includes('myself'), slots,
    });
  }
  return nodes;
}

/**
 * Starts a Redis Cluster of `masters` masters with `replicasPerMaster`
 * replicas each and cluster-node-timeout `nodeTimeoutMs` (small, so failovers
 * after a crash come within seconds). With tls = { cert, key, ca } (PEM file
 * paths; the certificate must allow client use too, as nodes present it to
 * each other), nodes listen only on a TLS port (`--port 0 --tls-port P`) and
 * talk TLS on the cluster bus and for replication, and every client here
 * (redis-cli, command()) presents cert/key and trusts ca. Resolves, once every
 * node agrees (waitOk), to the handle described at the end of this function.
 */
export async function startCluster({ masters = 3, replicasPerMaster = 1, nodeTimeoutMs = 1000, tls = null } = {}) {
  const dir = tempDir('chessd-e2e-cluster-');
  const connectOptions = tls
    ? {
      ca: readFileSync(tls.ca), cert: readFileSync(tls.cert), key: readFileSync(tls.key),
      // The harness checks the chain only: the nodes are its own, named by port.
      checkServerIdentity: () => undefined,
    }
    : null;
  const cliTls = tls ? ['--tls', '--cacert', tls.ca, '--cert', tls.cert, '--key', tls.key] : [];
  const nodes = [];
  const repairs = []; // see repairForgottenSlots
  let stopped = false;

  const nodeArgs = (port, nodeDir) => [
    '--cluster-enabled', 'yes', '--cluster-config-file', path.join(nodeDir, 'nodes.conf'),
    // Formed with a long node timeout: Redis drops a bus handshake that takes
    // longer than it and never retries, which on a loaded machine left a
    // cluster that never formed. The asked-for timeout is set once it is up.
    '--cluster-node-timeout', String(Math.max(nodeTimeoutMs, FORMING_NODE_TIMEOUT_MS)), '--dir', nodeDir, '--save', '', '--appendonly', 'no',
    // A replica's first sync starts at once, not after 5 s of waiting for more replicas.
    '--repl-diskless-sync-delay', '0',
    ...(tls ? ['--port', '0', '--tls-port', String(port), '--tls-cert-file', tls.cert, '--tls-key-file', tls.key,
      '--tls-ca-cert-file', tls.ca, '--tls-cluster', 'yes', '--tls-replication', 'yes'] : []),
  ];

  const startNode = async (index) => {
    const nodeDir = path.join(dir, `node${index}`);
    mkdirSync(nodeDir, { recursive: true });
    for (let attempt = 0; attempt < NODE_START_ATTEMPTS; attempt++) {
      rmSync(path.join(nodeDir, 'nodes.conf'), { force: true }); // a failed start may have written one
      const port = await pickPort(nodes.map((n) => n.port));
      const proc = await spawnRedis(port, nodeArgs(port, nodeDir));
      if (!proc) continue;
      // A forgotten stop() must not keep the test process alive; the exit hook of server.mjs kills the node.
      proc.unref();
      proc.stdout.unref();
      proc.stderr.unref();
      const node = { port, role: index < masters ? 'master' : 'replica', id: null, masterId: null, slots: [], process: proc, alive: true };
      node.exited = new Promise((resolve) => {
        proc.on('exit', () => { node.alive = false; resolve(); });
      });
      return node;
    }
    return assert.fail(`cannot start cluster node ${index} (redis-server is installed by make deps; set CHESSD_REDIS_SERVER)`);
  };

  const command = async (port, ...args) => (await redisCommands(port, [args], { tls: connectOptions }))[0];
  const live = () => nodes.filter((n) => n.alive);
  const byPort = (port) => nodes.find((n) => n.port === Number(port));

  /** One node's CLUSTER INFO, INFO replication and CLUSTER NODES, on one connection. */
  const look = async (node) => {
    const [info, replication, text] = await redisCommands(node.port,
      [['CLUSTER', 'INFO'], ['INFO', 'replication'], ['CLUSTER', 'NODES']], { tls: connectOptions });
    for (const reply of [info, replication, text]) if (reply instanceof Error) throw reply;
    return { info, replication, text, lines: parseClusterNodes(text) };
  };

  /** What a node's CLUSTER NODES says about slot owners and the roles of the live nodes, as one string. */
  const story = (lines) => {
    const portOf = new Map(lines.map((l) => [l.id, l.port]));
    const owners = lines.filter((l) => l.slots.length)
      .flatMap((l) => l.slots.map(([first, last]) => [first, last, l.port]))
      .sort((a, b) => a[0] - b[0]).map(([first, last, port]) => `${first}-${last}:${port}`);
    const roles = live().map((n) => {
      const line = lines.find((l) => l.port === n.port);
      if (!line) return `${n.port}:unknown`;
      return line.master ? `${n.port}:master` : `${n.port}:replica-of-${portOf.get(line.masterId)}`;
    });
    return `${owners.join(' ')} | ${roles.join(' ')}`;
  };

  /** Roles, ids, masters and slots of every node from lines (one node's CLUSTER NODES). */
  const refresh = (lines) => {
    const portOf = new Map(lines.map((l) => [l.id, l.port]));
    for (const line of lines) {
      const node = byPort(line.port);
      if (!node) continue;
      node.id = line.id;
      node.role = line.master ? 'master' : 'replica';
      node.masterId = line.masterId;
      node.masterPort = line.master ? null : portOf.get(line.masterId) ?? null;
      node.slots = line.slots;
    }
  };

  /** Each slot's owner (a port, 0 for none) by one node's CLUSTER NODES lines. */
  const ownersOf = (lines) => {
    const owners = new Int32Array(SLOT_COUNT);
    for (const line of lines) for (const [first, last] of line.slots) owners.fill(line.port, first, last + 1);
    return owners;
  };

  /**
   * Works around a Redis bug fixed in 7.4 (redis/redis#12564; 7.0 runs
   * here): a replica promoted soon after slots moved to its master can carry
   * a stale "owner no longer claims it" mark on one of them, give that slot
   * back to its old master on the old master's last ping, and drop it when
   * the old master turns replica: the new master's own view then has the
   * slot unassigned (cluster_state:fail for good) while every other node
   * gives it to the new master. Seen once in about 30 reshard-then-failover
   * runs. When exactly that is seen, the new master takes those slots back
   * with CLUSTER ADDSLOTS, and the repair is recorded in `repairs`. Resolves
   * to true when it repaired something.
   */
  const repairForgottenSlots = async (seen) => {
    if (seen.length < 2) return false;
    const owners = seen.map(({ lines }) => ownersOf(lines));
    let repaired = false;
    for (const [index, { node, lines }] of seen.entries()) {
      if (!lines.find((l) => l.myself)?.master) continue;
      const forgotten = [];
      for (let slot = 0; slot < SLOT_COUNT; slot++) {
        if (owners[index][slot] === 0 && owners.every((o, i) => i === index || o[slot] === node.port)) forgotten.push(slot);
      }
      if (!forgotten.length) continue;
      const reply = await command(node.port, 'CLUSTER', 'ADDSLOTS', ...forgotten);
      repairs.push({ port: node.port, slots: forgotten, reply: reply instanceof Error ? reply.message : reply });
      repaired = true;
    }
    return repaired;
  };

  /** Resolves to null when the cluster is ok (and refreshes roles), else to what is not right yet. */
  const notOk = async () => {
    const seen = [];
    for (const node of live()) {
      try {
        seen.push({ node, ...(await look(node)) });
      } catch (err) {
        return `node ${node.port} does not answer: ${err.message}`;
      }
    }
    if (!seen.length) return 'no node is running';
    if (await repairForgottenSlots(seen)) return `slots repaired: ${JSON.stringify(repairs.at(-1))}`;
    for (const { node, info, replication } of seen) {
      if (!/^cluster_state:ok\r?$/m.test(info)) {
        const counts = info.split('\n').filter((l) => /^cluster_(state|slots_|current_epoch|my_epoch)/.test(l));
        return `node ${node.port} does not report cluster_state:ok (${counts.map((l) => l.trim()).join(' ')})`;
      }
      if (/^role:slave\r?$/m.test(replication) && !/^master_link_status:up\r?$/m.test(replication)) {
        return `replica ${node.port} has no link to its master`;
      }
    }
    const first = story(seen[0].lines);
    for (const { node, lines } of seen.slice(1)) {
      const told = story(lines);
      if (told !== first) return `node ${node.port} tells ${told}; node ${seen[0].node.port} tells ${first}`;
    }
    const dead = seen[0].lines.find((l) => l.slots.length && !byPort(l.port)?.alive);
    if (dead) return `node ${dead.port} serves slots but is not running`;
    refresh(seen[0].lines);
    return null;
  };

  /** Each live node's CLUSTER NODES in short ("port role epoch slots" per node), for failure messages. */
  const describe = async () => {
    const views = [];
    for (const node of live()) {
      const text = await command(node.port, 'CLUSTER', 'NODES').catch((err) => err);
      const short = typeof text !== 'string' ? String(text) : text.split('\n').filter(Boolean).map((line) => {
        const f = line.split(' ');
        return `${f[1].replace(/@.*/, '').replace(/^.*:/, '')} ${f[2]} e${f[6]} ${f.slice(8).join(' ')}`.trim();
      }).join('; ');
      views.push(`node ${node.port} sees: ${short}`);
    }
    return views.join('\n');
  };

  /** Waits until every live node reports cluster_state:ok, agrees on slot owners and roles, and every replica's link is up. */
  const waitOk = async ({ timeoutMs = 20000 } = {}) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const why = await notOk();
      if (why === null) return;
      if (Date.now() >= deadline) assert.fail(`cluster not ok after ${timeoutMs} ms: ${why}\n${await describe()}`);
      await sleep(POLL_MS);
    }
  };

  const idOf = (node) => {
    if (typeof node === 'string' && /^[0-9a-f]{40}$/.test(node)) return node;
    const found = typeof node === 'object' && node !== null ? node : byPort(node);
    assert.ok(found?.id, `no cluster node ${JSON.stringify(node?.port ?? node)}`);
    return found.id;
  };

  /** SIGKILL; the process is ref'd again so that waiting for its exit keeps the event loop alive. */
  const kill = (node) => {
    node.process.ref();
    node.process.kill('SIGKILL');
  };

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    for (const node of nodes) if (node.alive) kill(node);
    await Promise.all(nodes.map((n) => n.exited));
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    for (let i = 0; i < masters * (replicasPerMaster + 1); i++) nodes.push(await startNode(i));
    await runCli([...cliTls, '--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`),
      '--cluster-replicas', String(replicasPerMaster), '--cluster-yes']);
    await waitOk({ timeoutMs: 30000 });
    for (const node of nodes) {
      const reply = await command(node.port, 'CONFIG', 'SET', 'cluster-node-timeout', String(nodeTimeoutMs));
      assert.equal(reply, 'OK', `CONFIG SET cluster-node-timeout on ${node.port}: ${reply}`);
    }
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    dir,
    /** { port, role: 'master' | 'replica', id, masterId, masterPort, slots, process, alive, exited } of each node, roles as last read. */
    nodes,
    /** { port, slots, reply } of each time waitOk gave a master back slots Redis 7.0 made it forget (repairForgottenSlots). */
    repairs,
    /** redis+cluster:// (rediss+cluster:// with TLS) of every live master, as last read. */
    get url() {
      const scheme = tls ? 'rediss+cluster' : 'redis+cluster';
      return `${scheme}://${live().filter((n) => n.role === 'master').map((n) => `127.0.0.1:${n.port}`).join(',')}`;
    },
    /** One command on the node at port; resolves to its reply (an Error object for an error reply). */
    command,
    /** The live masters, with roles and slots read afresh from CLUSTER NODES of a live node. */
    async masters() {
      const [node] = live();
      assert.ok(node, 'no cluster node is running');
      const text = await command(node.port, 'CLUSTER', 'NODES');
      assert.equal(typeof text, 'string', `CLUSTER NODES on ${node.port}: ${text}`);
      refresh(parseClusterNodes(text));
      return live().filter((n) => n.role === 'master');
    },
    /** The node serving slot by CLUSTER SLOTS of a live node (undefined when none does). */
    async slotOwner(slot) {
      const [node] = live();
      assert.ok(node, 'no cluster node is running');
      const ranges = await command(node.port, 'CLUSTER', 'SLOTS');
      assert.ok(Array.isArray(ranges), `CLUSTER SLOTS on ${node.port}: ${ranges}`);
      const range = ranges.find(([first, last]) => first <= slot && slot <= last);
      return range ? byPort(range[2][1]) : undefined;
    },
    /**
     * Moves `slots` slots (redis-cli picks them, lowest first) from one master
     * to another (node objects, ports or node ids), keys included; resolves
     * once redis-cli is done and every node agrees.
     */
    async reshard({ from, to, slots }) {
      const via = live().find((n) => n.role === 'master');
      assert.ok(via, 'no live master');
      await runCli([...cliTls, '--cluster', 'reshard', `127.0.0.1:${via.port}`, '--cluster-from', idOf(from),
        '--cluster-to', idOf(to), '--cluster-slots', String(slots), '--cluster-yes']);
      await waitOk();
    },
    /** CLUSTER FAILOVER on the replica at replicaPort (its master must be up); resolves once it is master and the cluster ok. */
    async failover(replicaPort, { timeoutMs = 15000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      const reply = await command(replicaPort, 'CLUSTER', 'FAILOVER');
      assert.equal(reply, 'OK', `CLUSTER FAILOVER on ${replicaPort}: ${reply}`);
      for (;;) {
        const role = await command(replicaPort, 'ROLE');
        if (Array.isArray(role) && role[0] === 'master') break;
        assert.ok(Date.now() < deadline, `node ${replicaPort} is not master ${timeoutMs} ms after CLUSTER FAILOVER`);
        await sleep(POLL_MS);
      }
      await waitOk({ timeoutMs: Math.max(1000, deadline - Date.now()) });
    },
    /** SIGKILL (a crash) of the node at port; resolves once it has exited. */
    async kill(port) {
      const node = byPort(port);
      assert.ok(node, `no cluster node on port ${port}`);
      if (node.alive) kill(node);
      await node.exited;
    },
    waitOk,
    /** Kills every node and removes the directory; safe to call twice. */
    stop,
  };
}
