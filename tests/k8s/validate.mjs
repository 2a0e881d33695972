// Validates rendered k8s/ manifests offline: every object against the
// Kubernetes schema of its kind (kubernetes-models), with unknown fields
// refused as the API server's strict field validation would, then chessd's
// deployment policy (k8s/README.md): the API Deployment chessd, its engine
// workers chessd-engine (`chessd engine`, never behind the Service), Redis.
//
//   node validate.mjs [--passed N --failed N] TARGET=FILE...
//   node validate.mjs --self-test
//
// TARGET names the kustomization that FILE was rendered from (base,
// overlays/dev, overlays/prod, examples/managed-redis, examples/redis-cluster,
// examples/redis-tls, examples/redis-tls-private-ca): it picks the
// expectations below. Prints one line per check and a closing "k8s: N
// passed, N failed" line (--passed/--failed add the caller's own counts);
// exits 1 on any failure.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

// What each rendered target must hold. engine: the engine workers'
// Deployment chessd-engine (replicas, HPA range, CHESSD_ENGINE_WORKERS);
// apiEngineSized: the API pods' CPU request holds their own engine's search
// and their CPU limit a core beside it (not in dev, which is small).
const ENGINE_PROD = { replicas: 2, hpaMin: 2, hpaMax: 16, workers: 2 };
const TARGETS = {
  base: {
    replicas: 3, hpaMin: 3, hpaMax: 20, redis: "10Gi", namespace: undefined, secret: false, pinned: false,
    engine: { replicas: 2, hpaMin: 2, hpaMax: 10, workers: 1 }, apiEngineSized: true,
  },
  "overlays/dev": {
    replicas: 1, hpaMin: 1, hpaMax: 2, redis: "1Gi", namespace: "chessd-dev", secret: true, pinned: false,
    engine: { replicas: 1, hpaMin: 1, hpaMax: 2, workers: 1 }, apiEngineSized: false,
  },
  "overlays/prod": {
    replicas: 3, hpaMin: 3, hpaMax: 20, redis: "20Gi", namespace: "chessd", secret: true, pinned: true,
    engine: ENGINE_PROD, apiEngineSized: true,
  },
  "examples/managed-redis": {
    replicas: 3, hpaMin: 3, hpaMax: 20, redis: null, namespace: "chessd", secret: true, pinned: true, redisUrlFromSecret: true,
    engine: ENGINE_PROD, apiEngineSized: true,
    redisFiles: ["CHESSD_REDIS_PASSWORD_FILE"],
  },
  "examples/redis-cluster": {
    replicas: 3, hpaMin: 3, hpaMax: 20, redis: null, namespace: "chessd", secret: true, pinned: true, redisUrlFromSecret: true,
    engine: ENGINE_PROD, apiEngineSized: true,
  },
  // A public CA's certificate and no client certificate: the system CAs, so
  // no CA file, certificate or key may be asked for.
  "examples/redis-tls": {
    replicas: 3, hpaMin: 3, hpaMax: 20, redis: null, namespace: "chessd", secret: true, pinned: true, redisUrlFromSecret: true,
    engine: ENGINE_PROD, apiEngineSized: true,
    redisFiles: ["CHESSD_REDIS_PASSWORD_FILE"], noRedisFiles: ["CHESSD_REDIS_CA_FILE", "CHESSD_REDIS_CERT_FILE", "CHESSD_REDIS_KEY_FILE"],
  },
  "examples/redis-tls-private-ca": {
    replicas: 3, hpaMin: 3, hpaMax: 20, redis: null, namespace: "chessd", secret: true, pinned: true, redisUrlFromSecret: true,
    engine: ENGINE_PROD, apiEngineSized: true,
    redisFiles: ["CHESSD_REDIS_CA_FILE", "CHESSD_REDIS_CERT_FILE", "CHESSD_REDIS_KEY_FILE"],
  },
};

const CHESSD_PORT = 8080;
const CHESSD_ENGINE_PATH = "/usr/games/stockfish"; // where the image's stockfish package puts it
const IMAGE_ENTRYPOINT = ["chessd", "serve"]; // the Dockerfile's ENTRYPOINT
// What one engine worker holds beside its hash (Stockfish 15.1 measured:
// about 75 MB with a 1 MB hash), and what one pod holds beside its workers
// (about 50 MB of Stockfish's binary mapped, shared by the workers, and chessd).
const ENGINE_WORKER_MIB = 80;
// Each worker is two processes: the image holds Stockfish and Fairy-Stockfish
// (--variant-engine's default, about 81 MB resident with a 16 MB hash), and
// chessd runs --engine-workers of each.
const ENGINES_PER_WORKER = 2;
const ENGINE_POD_MIB = 80;
const ENGINE_HASH_DEFAULT_MB = 16;
const CHESSD_PROBE_PORT = 8081; // --probe-port: the probes' own port, named "probe"
const CHESSD_UID = 10001;

let passed = 0;
let failed = 0;

function check(label, ok, detail = "") {
  if (ok) {
    passed++;
    console.log(`ok - ${label}`);
  } else {
    failed++;
    console.log(`not ok - ${label}${detail ? `: ${detail}` : ""}`);
  }
  return ok;
}

// ---------------------------------------------------------------- schemas

// Records which properties the schema validator reads on every object. The
// compiled validators read each property their schema defines and enumerate
// the keys of maps (labels, resources.limits, ...), so a key of a
// non-enumerated object that was never read is one the schema does not know.
function tracked(value, path, nodes) {
  if (!value || typeof value !== "object") return value;
  let node = nodes.get(path);
  if (!node) {
    node = { object: value, read: new Set(), enumerated: Array.isArray(value) };
    nodes.set(path, node);
  }
  const child = (key, v) => tracked(v, Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`, nodes);
  return new Proxy(value, {
    get(target, key, receiver) {
      const v = Reflect.get(target, key, receiver);
      if (typeof key !== "string" || (Array.isArray(target) && !/^\d+$/.test(key))) return v;
      node.read.add(key);
      return child(key, v);
    },
    has(target, key) {
      if (typeof key === "string") node.read.add(key);
      return Reflect.has(target, key);
    },
    getOwnPropertyDescriptor(target, key) {
      if (typeof key === "string") node.read.add(key);
      return Reflect.getOwnPropertyDescriptor(target, key);
    },
    ownKeys(target) {
      node.enumerated = true;
      return Reflect.ownKeys(target);
    },
  });
}

function unknownFields(model, object) {
  const nodes = new Map();
  model.prototype.validate.call(tracked(object, "", nodes));
  const unknown = [];
  for (const [path, node] of nodes) {
    if (node.enumerated) continue;
    for (const key of Object.keys(node.object)) if (!node.read.has(key)) unknown.push(`${path}.${key}`.replace(/^\./, ""));
  }
  return unknown;
}

const modules = new Map();

async function modelFor(apiVersion, kind) {
  if (typeof apiVersion !== "string" || !/^([a-z0-9.-]+\/)?v[0-9]+((alpha|beta)[0-9]+)?$/.test(apiVersion)) return null;
  if (!modules.has(apiVersion)) {
    try {
      modules.set(apiVersion, await import(`kubernetes-models/${apiVersion}`));
    } catch {
      modules.set(apiVersion, null);
    }
  }
  const mod = modules.get(apiVersion);
  const model = mod && Object.prototype.hasOwnProperty.call(mod, kind) ? mod[kind] : null;
  return typeof model === "function" && model.kind === kind && model.apiVersion === apiVersion ? model : null;
}

async function validateSchema(label, object) {
  const model = await modelFor(object.apiVersion, object.kind);
  if (!check(`${label}: known kind`, model, `no Kubernetes model for ${object.apiVersion} ${object.kind}`)) return;
  let error = "";
  try {
    new model(object).validate();
  } catch (e) {
    error = e.message;
  }
  if (!check(`${label}: schema`, !error, error)) return;
  const unknown = unknownFields(model, object);
  check(`${label}: no unknown fields`, unknown.length === 0, unknown.join(", "));
}

// ---------------------------------------------------------------- helpers

const UNITS = { "": 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 };

function quantity(q) {
  const m = /^([0-9]+(?:\.[0-9]+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(String(q ?? ""));
  return m ? Number(m[1]) * UNITS[m[2] ?? ""] : NaN;
}

// Redis memory units: 1k = 1000, 1kb = 1024 (case-insensitive).
function redisBytes(text) {
  const m = /^([0-9]+)(k|kb|m|mb|g|gb)?$/i.exec(String(text ?? ""));
  if (!m) return NaN;
  const unit = { "": 1, k: 1e3, kb: 2 ** 10, m: 1e6, mb: 2 ** 20, g: 1e9, gb: 2 ** 30 }[(m[2] ?? "").toLowerCase()];
  return Number(m[1]) * unit;
}

function matches(selector, labels) {
  if (!selector || !labels) return false;
  const { matchLabels = {}, matchExpressions = [] } = selector;
  if (Object.keys(matchLabels).length === 0 && matchExpressions.length === 0) return true;
  for (const [k, v] of Object.entries(matchLabels)) if (labels[k] !== v) return false;
  for (const e of matchExpressions) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    if (e.operator === "In" && !(has && e.values.includes(labels[e.key]))) return false;
    if (e.operator === "NotIn" && has && e.values.includes(labels[e.key])) return false;
    if (e.operator === "Exists" && !has) return false;
    if (e.operator === "DoesNotExist" && has) return false;
  }
  return true;
}

// A Service's plain map selector.
function selects(map, labels) {
  return !!map && Object.keys(map).length > 0 && Object.entries(map).every(([k, v]) => labels?.[k] === v);
}

function containerPort(container, port) {
  if (typeof port === "number") return port;
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

function imageRef(image) {
  const at = image.indexOf("@");
  const name = at >= 0 ? image.slice(0, at) : image;
  const lastSlash = name.lastIndexOf("/");
  const colon = name.lastIndexOf(":");
  return { tag: colon > lastSlash ? name.slice(colon + 1) : "", digest: at >= 0 ? image.slice(at + 1) : "" };
}

function argValue(args, flag) {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
}

// The ConfigMaps' data a container reads through envFrom, merged in order.
function configOf(c, configMaps) {
  const names = (c.envFrom ?? []).filter((e) => e.configMapRef).map((e) => e.configMapRef.name);
  return Object.assign({}, ...names.map((n) => configMaps.find((m) => m.metadata.name === n)?.data ?? {}));
}

// A setting as the container sees it: its own literal env entry wins over the ConfigMaps.
function setting(c, config, name) {
  const e = (c.env ?? []).find((x) => x.name === name && "value" in x);
  return e ? e.value : config[name];
}

// A boolean setting as chessd reads it (1, 0, true, false).
function truthy(v) {
  return v === "1" || v === "true";
}

// The JSON of a value with its object keys sorted, to compare two specs.
function canonical(v) {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(",")}}`;
  return JSON.stringify(v);
}

// The TCP ports of the nodes a Redis URL names (redis://, rediss://, +cluster).
function redisUrlPorts(url) {
  const m = /^rediss?(?:\+cluster)?:\/\/(?:[^@/]*@)?([^/]*)/.exec(url ?? "");
  if (!m) return [];
  return m[1].split(",").map((hostPort) => {
    const p = /:(\d+)$/.exec(hostPort.replace(/^\[[^\]]*\]/, ""));
    return p ? Number(p[1]) : 6379;
  });
}

// Whether a NetworkPolicy rule's ports admit TCP port (a rule without ports admits all).
function admitsPort(rule, container, port, protocol = "TCP") {
  const ports = rule.ports ?? [];
  return ports.length === 0 || ports.some((x) => (x.protocol ?? "TCP") === protocol &&
    (x.port === undefined || (x.endPort !== undefined ? x.port <= port && port <= x.endPort : containerPort(container, x.port) === port)));
}

// ---------------------------------------------------------------- policy

const ALLOWED_VOLUMES = ["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"];

// Pod Security Standards, "restricted" (latest), plus a read-only root
// filesystem and a non-root numeric user and group on every container.
function checkRestricted(label, podSpec) {
  const pod = podSpec.securityContext ?? {};
  const containers = [...(podSpec.initContainers ?? []), ...(podSpec.containers ?? [])];
  check(`${label}: no host namespaces`, !podSpec.hostNetwork && !podSpec.hostPID && !podSpec.hostIPC);
  const badVolumes = (podSpec.volumes ?? []).filter((v) => !Object.keys(v).some((k) => ALLOWED_VOLUMES.includes(k)));
  check(`${label}: only restricted volume types`, badVolumes.length === 0, badVolumes.map((v) => v.name).join(", "));
  check(`${label}: pod runAsUser is not root`, pod.runAsUser !== 0);
  check(`${label}: no unsafe sysctls`, !(pod.sysctls ?? []).length, "sysctls set");
  for (const c of containers) {
    const sc = c.securityContext ?? {};
    const l = `${label} container ${c.name}`;
    check(`${l}: not privileged`, sc.privileged !== true);
    check(`${l}: allowPrivilegeEscalation false`, sc.allowPrivilegeEscalation === false);
    check(`${l}: readOnlyRootFilesystem`, sc.readOnlyRootFilesystem === true);
    const runAsNonRoot = sc.runAsNonRoot ?? pod.runAsNonRoot;
    check(`${l}: runAsNonRoot`, runAsNonRoot === true && sc.runAsNonRoot !== false);
    const uid = sc.runAsUser ?? pod.runAsUser;
    const gid = sc.runAsGroup ?? pod.runAsGroup;
    check(`${l}: numeric non-root user and group`, Number.isInteger(uid) && uid > 0 && Number.isInteger(gid) && gid > 0, `uid ${uid} gid ${gid}`);
    const drop = sc.capabilities?.drop ?? [];
    const add = sc.capabilities?.add ?? [];
    check(`${l}: capabilities drop ALL`, drop.includes("ALL"));
    check(`${l}: adds no capability but NET_BIND_SERVICE`, add.every((a) => a === "NET_BIND_SERVICE"), add.join(","));
    const seccomp = sc.seccompProfile?.type ?? pod.seccompProfile?.type;
    check(`${l}: seccompProfile RuntimeDefault or Localhost`, seccomp === "RuntimeDefault" || seccomp === "Localhost", seccomp);
    check(`${l}: no host ports`, (c.ports ?? []).every((p) => !p.hostPort));
    check(`${l}: procMount Default`, sc.procMount === undefined || sc.procMount === "Default");
    const apparmor = sc.appArmorProfile?.type ?? pod.appArmorProfile?.type;
    check(`${l}: AppArmor unset or RuntimeDefault/Localhost`, apparmor === undefined || apparmor !== "Unconfined");
  }
}

function checkResources(label, c) {
  const r = c.resources ?? {};
  let ok = true;
  for (const kind of ["cpu", "memory"]) {
    const req = quantity(r.requests?.[kind]);
    const lim = quantity(r.limits?.[kind]);
    ok = check(`${label}: ${kind} request and limit, request <= limit`, req > 0 && lim > 0 && req <= lim, `${r.requests?.[kind]} / ${r.limits?.[kind]}`) && ok;
  }
  return ok;
}

// The files chessd reads for Redis (CHESSD_REDIS_CA_FILE, _CERT_FILE,
// _KEY_FILE, _PASSWORD_FILE) and its service keys (CHESSD_SERVICE_KEYS_FILE),
// from the ConfigMap or a literal: each that is set must be a key of a Secret
// mounted read-only in the container (rendered: of a Secret the target
// renders), readable by chessd, and the private key and the password by
// nobody else; required lists those the target must set.
const PRIVATE_FILES = ["CHESSD_REDIS_KEY_FILE", "CHESSD_REDIS_PASSWORD_FILE"];
const SECRET_FILES = ["CHESSD_REDIS_CA_FILE", "CHESSD_REDIS_CERT_FILE", "CHESSD_REDIS_KEY_FILE", "CHESSD_REDIS_PASSWORD_FILE",
  "CHESSD_SERVICE_KEYS_FILE"];
function checkSecretFiles(D, spec, c, config, secrets, required, absent, rendered) {
  const value = (name) => (c.env ?? []).find((e) => e.name === name && "value" in e)?.value ?? config[name];
  for (const name of required) check(D(`${name} set`), !!value(name));
  for (const name of absent) check(D(`${name} not set`), !value(name) && !(c.env ?? []).some((e) => e.name === name), value(name));
  check(D("CHESSD_REDIS_CERT_FILE and CHESSD_REDIS_KEY_FILE set together"),
    !value("CHESSD_REDIS_CERT_FILE") === !value("CHESSD_REDIS_KEY_FILE"));
  // chessd refuses to start with both: the password from any source (a
  // literal, a Secret key by name, a Secret passed whole), and the file.
  const passwordFromSecrets = (c.envFrom ?? []).some((e) => e.secretRef && secrets.some((s) =>
    s.metadata.name === e.secretRef.name && "CHESSD_REDIS_PASSWORD" in { ...s.data, ...s.stringData }));
  check(D("CHESSD_REDIS_PASSWORD and CHESSD_REDIS_PASSWORD_FILE not both set"),
    !(value("CHESSD_REDIS_PASSWORD_FILE") && (value("CHESSD_REDIS_PASSWORD") || passwordFromSecrets ||
      (c.env ?? []).some((e) => e.name === "CHESSD_REDIS_PASSWORD"))));
  for (const name of SECRET_FILES) {
    const path = value(name);
    if (!path) continue;
    const mount = (c.volumeMounts ?? []).find((m) => path.startsWith(`${m.mountPath.replace(/\/$/, "")}/`));
    const volume = mount && (spec.volumes ?? []).find((v) => v.name === mount.name);
    if (!check(D(`${name} ${path} is in a mounted Secret volume`), volume?.secret, mount ? `volume ${mount.name}` : "no mount")) continue;
    check(D(`${name}: its mount is read-only`), mount.readOnly === true);
    const rest = path.slice(mount.mountPath.replace(/\/$/, "").length + 1);
    const item = (volume.secret.items ?? []).find((i) => i.path === rest);
    const key = volume.secret.items ? item?.key : rest;
    const s = secrets.find((x) => x.metadata.name === volume.secret.secretName);
    if (rendered) {
      check(D(`${name}: Secret ${volume.secret.secretName} is rendered with the key ${key}`),
        !!(s && key && (s.data?.[key] ?? s.stringData?.[key])));
    }
    check(D(`${name}: the whole Secret is mounted, no subPath (a change of it must reach the file)`), !mount.subPath);
    const mode = item?.mode ?? volume.secret.defaultMode ?? 0o644;
    const readable = (mode & 0o004) !== 0 || ((mode & 0o040) !== 0 && Number.isInteger(spec.securityContext?.fsGroup));
    check(D(`${name}: chessd can read it (mode ${mode.toString(8)}, fsGroup ${spec.securityContext?.fsGroup})`), readable);
    if (PRIVATE_FILES.includes(name)) check(D(`${name}: not world-readable (mode ${mode.toString(8)})`), (mode & 0o007) === 0);
  }
}

function byKind(objects, kind) {
  return objects.filter((o) => o.kind === kind);
}

function checkTarget(target, objects) {
  const want = TARGETS[target];
  const T = (s) => `${target}: ${s}`;
  if (!check(T("known target"), want, `expected one of ${Object.keys(TARGETS).join(", ")}`)) return;

  const names = new Set();
  for (const o of objects) {
    const key = `${o.kind}/${o.metadata?.namespace ?? ""}/${o.metadata?.name}`;
    check(T(`${o.kind} ${o.metadata?.name} is unique`), !names.has(key));
    names.add(key);
    check(T(`${o.kind} ${o.metadata?.name} namespace ${want.namespace ?? "(none)"}`), o.metadata?.namespace === want.namespace, o.metadata?.namespace);
  }
  const podTemplates = [...byKind(objects, "Deployment"), ...byKind(objects, "StatefulSet")];
  for (const w of podTemplates) checkRestricted(T(`${w.kind} ${w.metadata.name}`), w.spec.template.spec);

  // chessd
  const deployments = byKind(objects, "Deployment").filter((d) => d.metadata.name === "chessd");
  if (!check(T("one Deployment chessd"), deployments.length === 1)) return;
  const d = deployments[0];
  const podLabels = d.spec.template.metadata?.labels ?? {};
  const spec = d.spec.template.spec;
  const c = spec.containers.find((x) => x.name === "chessd");
  if (!check(T("Deployment chessd has a container chessd"), c)) return;
  const D = (s) => T(`Deployment chessd: ${s}`);
  check(D(`replicas ${want.replicas}`), d.spec.replicas === want.replicas, d.spec.replicas);
  check(D("selector matches its pod labels"), matches(d.spec.selector, podLabels));
  const ru = d.spec.strategy?.rollingUpdate ?? {};
  check(D("RollingUpdate maxUnavailable 0, maxSurge 1"),
    d.spec.strategy?.type === "RollingUpdate" && (ru.maxUnavailable === 0 || ru.maxUnavailable === "0%") && ru.maxSurge === 1,
    JSON.stringify(d.spec.strategy));
  check(D("pod and container run as 10001:10001"),
    (c.securityContext?.runAsUser ?? spec.securityContext?.runAsUser) === CHESSD_UID &&
      (c.securityContext?.runAsGroup ?? spec.securityContext?.runAsGroup) === CHESSD_UID);
  check(D(`container port ${CHESSD_PORT}`), (c.ports ?? []).some((p) => p.containerPort === CHESSD_PORT && (p.protocol ?? "TCP") === "TCP"));
  check(D(`container port ${CHESSD_PROBE_PORT} named probe`),
    (c.ports ?? []).some((p) => p.name === "probe" && p.containerPort === CHESSD_PROBE_PORT && (p.protocol ?? "TCP") === "TCP"));
  for (const [probe, path] of [["readinessProbe", "/readyz"], ["livenessProbe", "/healthz"], ["startupProbe", "/healthz"]]) {
    const p = c[probe]?.httpGet;
    check(D(`${probe} GET ${path} on the port named probe (${CHESSD_PROBE_PORT})`),
      p && p.path === path && p.port === "probe" && containerPort(c, p.port) === CHESSD_PROBE_PORT, JSON.stringify(c[probe]));
  }
  check(D("liveness probe is not /readyz (a Redis outage must restart nothing)"), c.livenessProbe?.httpGet?.path !== "/readyz");
  checkResources(D("container chessd"), c);
  const ann = d.spec.template.metadata?.annotations ?? {};
  check(D("Prometheus scrape annotations"),
    ann["prometheus.io/scrape"] === "true" && ann["prometheus.io/port"] === String(CHESSD_PORT) && ann["prometheus.io/path"] === "/metrics",
    JSON.stringify(ann));
  check(D("spread across nodes"),
    (spec.topologySpreadConstraints ?? []).some((t) => t.topologyKey === "kubernetes.io/hostname" && matches(t.labelSelector, podLabels)));
  check(D("enableServiceLinks false (CHESSD_PORT would be set to tcp://...)"), spec.enableServiceLinks === false);
  check(D("image set"), typeof c.image === "string" && c.image.length > 0);
  if (want.pinned) {
    const ref = imageRef(c.image);
    check(D("image pinned to a tag or digest, not latest"), ref.digest || (ref.tag && ref.tag !== "latest"), c.image);
  }

  // Configuration and the shutdown budget.
  const configMaps = byKind(objects, "ConfigMap");
  const secrets = byKind(objects, "Secret");
  const cmRefs = (c.envFrom ?? []).filter((e) => e.configMapRef).map((e) => e.configMapRef.name);
  check(D("env from a ConfigMap chessd-config*"), cmRefs.some((n) => n.startsWith("chessd-config")), cmRefs.join(","));
  const config = Object.assign({}, ...cmRefs.map((n) => configMaps.find((m) => m.metadata.name === n)?.data ?? {}));
  for (const n of cmRefs) check(D(`ConfigMap ${n} is rendered`), configMaps.some((m) => m.metadata.name === n));
  const tokenRef = (c.env ?? []).find((e) => e.name === "CHESSD_TOKEN_SECRET")?.valueFrom?.secretKeyRef;
  check(D("CHESSD_TOKEN_SECRET from a required Secret key"),
    tokenRef && tokenRef.name.startsWith("chessd-secrets") && tokenRef.key === "CHESSD_TOKEN_SECRET" && tokenRef.optional !== true);
  check(D("no CHESSD_TOKEN_SECRET in a ConfigMap or a literal"),
    !("CHESSD_TOKEN_SECRET" in config) && !(c.env ?? []).some((e) => e.name === "CHESSD_TOKEN_SECRET" && "value" in e));
  if (want.secret && tokenRef) {
    const s = secrets.find((x) => x.metadata.name === tokenRef.name);
    const value = s && (s.data?.CHESSD_TOKEN_SECRET ?? s.stringData?.CHESSD_TOKEN_SECRET);
    check(D(`Secret ${tokenRef.name} is rendered with a non-empty CHESSD_TOKEN_SECRET`), !!value);
    for (const e of c.envFrom ?? []) {
      if (e.secretRef) check(D(`Secret ${e.secretRef.name} (envFrom) is rendered`), secrets.some((x) => x.metadata.name === e.secretRef.name));
    }
  }
  if (!want.secret) check(T("renders no Secret (the overlays make it)"), secrets.length === 0);
  const grace = Number(config.CHESSD_SHUTDOWN_GRACE ?? 10);
  const preStop = c.lifecycle?.preStop;
  const preStopSeconds = preStop?.sleep?.seconds ?? 0;
  check(D("preStop hook"), preStop && (preStop.sleep || preStop.exec || preStop.httpGet), JSON.stringify(preStop));
  const tgps = spec.terminationGracePeriodSeconds ?? 30;
  check(D(`terminationGracePeriodSeconds ${tgps} > preStop ${preStopSeconds} s + CHESSD_SHUTDOWN_GRACE ${grace} s (and > 10)`),
    tgps > preStopSeconds + grace && tgps > 10);
  check(D("CHESSD_THREADS set (the default counts the node's cores)"), Number(config.CHESSD_THREADS) >= 1);
  check(D(`CHESSD_PORT ${CHESSD_PORT}`), config.CHESSD_PORT === undefined || Number(config.CHESSD_PORT) === CHESSD_PORT);
  check(D(`CHESSD_PROBE_PORT ${CHESSD_PROBE_PORT} (the probes' port)`), Number(config.CHESSD_PROBE_PORT) === CHESSD_PROBE_PORT,
    config.CHESSD_PROBE_PORT);
  const redisUrl = config.CHESSD_REDIS_URL;
  check(D("CHESSD_REDIS_URL is a redis:// URL"), /^redis:\/\//.test(redisUrl ?? ""), redisUrl);
  check(D("CHESSD_REQUIRE_NOEVICTION (unready while Redis may evict games)"),
    truthy(setting(c, config, "CHESSD_REQUIRE_NOEVICTION")), setting(c, config, "CHESSD_REQUIRE_NOEVICTION"));
  if (want.redisUrlFromSecret) {
    const ref = (c.env ?? []).find((e) => e.name === "CHESSD_REDIS_URL")?.valueFrom?.secretKeyRef;
    check(D("CHESSD_REDIS_URL from a required Secret key"), ref && ref.key === "CHESSD_REDIS_URL" && ref.optional !== true);
    const s = ref && secrets.find((x) => x.metadata.name === ref.name);
    check(D("that Secret is rendered with the key"), !!(s && (s.data?.CHESSD_REDIS_URL ?? s.stringData?.CHESSD_REDIS_URL)));
  }
  checkSecretFiles(D, spec, c, config, secrets, [...(want.redisFiles ?? []), "CHESSD_SERVICE_KEYS_FILE"], want.noRedisFiles ?? [],
    want.secret);

  // The API pods keep an engine of their own (k8s/README.md, "Engine workers").
  const apiWorkers = Number(setting(c, config, "CHESSD_ENGINE_WORKERS"));
  const apiHash = Number(setting(c, config, "CHESSD_ENGINE_HASH") ?? ENGINE_HASH_DEFAULT_MB);
  check(D(`CHESSD_ENGINE ${CHESSD_ENGINE_PATH} (the image's Stockfish)`), setting(c, config, "CHESSD_ENGINE") === CHESSD_ENGINE_PATH,
    setting(c, config, "CHESSD_ENGINE"));
  check(D("CHESSD_ENGINE_WORKERS set, at least 1 (every engine route answers on every API pod)"),
    Number.isInteger(apiWorkers) && apiWorkers >= 1, setting(c, config, "CHESSD_ENGINE_WORKERS"));
  checkEngineMemory(D, c, apiWorkers, apiHash);
  if (want.apiEngineSized) {
    const req = quantity(c.resources?.requests?.cpu);
    const lim = quantity(c.resources?.limits?.cpu);
    check(D(`CPU request ${c.resources?.requests?.cpu} holds its ${apiWorkers} engine(s) (1 CPU each: one search alone does not scale the API out)`),
      req >= apiWorkers);
    check(D(`CPU limit ${c.resources?.limits?.cpu} leaves the server threads a core beside its ${apiWorkers} engine(s)`), lim >= apiWorkers + 1);
  }

  // Service
  const svc = byKind(objects, "Service").find((s) => s.metadata.name === "chessd");
  if (check(T("Service chessd"), svc)) {
    check(T("Service chessd is ClusterIP"), (svc.spec.type ?? "ClusterIP") === "ClusterIP" && svc.spec.clusterIP !== "None");
    check(T("Service chessd selects the chessd pods"), selects(svc.spec.selector, podLabels));
    check(T(`Service chessd port 80 -> ${CHESSD_PORT}`), (svc.spec.ports ?? []).some((p) => p.port === 80 && containerPort(c, p.targetPort ?? p.port) === CHESSD_PORT));
    check(T(`Service chessd does not expose the probe port ${CHESSD_PROBE_PORT}`),
      !(svc.spec.ports ?? []).some((p) => containerPort(c, p.targetPort ?? p.port) === CHESSD_PROBE_PORT));
  }

  // HPA
  const hpa = byKind(objects, "HorizontalPodAutoscaler").find((h) => h.spec.scaleTargetRef?.name === "chessd");
  if (check(T("HorizontalPodAutoscaler for chessd"), hpa)) {
    check(T("HPA is autoscaling/v2 on Deployment chessd"), hpa.apiVersion === "autoscaling/v2" && hpa.spec.scaleTargetRef.kind === "Deployment" && hpa.spec.scaleTargetRef.apiVersion === "apps/v1");
    check(T(`HPA min ${want.hpaMin} max ${want.hpaMax}`), hpa.spec.minReplicas === want.hpaMin && hpa.spec.maxReplicas === want.hpaMax, `${hpa.spec.minReplicas}..${hpa.spec.maxReplicas}`);
    check(T("HPA on CPU utilization 70%"), (hpa.spec.metrics ?? []).some((m) => m.type === "Resource" && m.resource?.name === "cpu" && m.resource.target?.type === "Utilization" && m.resource.target.averageUtilization === 70));
    check(T("Deployment replicas within the HPA range"), d.spec.replicas >= hpa.spec.minReplicas && d.spec.replicas <= hpa.spec.maxReplicas);
  }

  // PDB
  const pdbs = byKind(objects, "PodDisruptionBudget").filter((p) => matches(p.spec.selector, podLabels));
  if (check(T("one PodDisruptionBudget selects the chessd pods"), pdbs.length === 1)) {
    const p = pdbs[0].spec;
    check(T("PDB is minAvailable 2 or maxUnavailable 1"), p.minAvailable === 2 || p.maxUnavailable === 1, JSON.stringify(p));
    const allowed = p.maxUnavailable !== undefined ? p.maxUnavailable : want.hpaMin - p.minAvailable;
    check(T(`PDB lets a drain evict a pod at ${want.hpaMin} replica(s)`), allowed >= 1);
  }

  // NetworkPolicy: chessd accepts 8080.
  const policies = byKind(objects, "NetworkPolicy");
  const chessdPolicies = policies.filter((p) => matches(p.spec.podSelector, podLabels));
  check(T("a NetworkPolicy admits TCP 8080 to chessd"),
    chessdPolicies.some((p) => (p.spec.policyTypes ?? ["Ingress"]).includes("Ingress") &&
      (p.spec.ingress ?? []).some((r) => !(r.from ?? []).length && (r.ports ?? []).some((x) => containerPort(c, x.port) === CHESSD_PORT && (x.protocol ?? "TCP") === "TCP"))));
  // The probe port has no per-address limit: only the node (the kubelet), whose traffic is always let in, reaches it.
  check(T(`no NetworkPolicy admits the probe port ${CHESSD_PROBE_PORT}`),
    !chessdPolicies.some((p) => (p.spec.ingress ?? []).some((r) => !(r.ports ?? []).length ||
      r.ports.some((x) => containerPort(c, x.port) === CHESSD_PROBE_PORT))));

  const engine = checkEngine(target, objects, want, { d, c, podLabels });

  // Redis
  const redisSets = byKind(objects, "StatefulSet").filter((s) => s.metadata.name === "chessd-redis");
  if (want.redis === null) {
    check(T("no in-cluster Redis (StatefulSet, Service, NetworkPolicy)"),
      redisSets.length === 0 && !objects.some((o) => o.metadata?.name === "chessd-redis"));
    return;
  }
  if (!check(T("one StatefulSet chessd-redis"), redisSets.length === 1)) return;
  const r = redisSets[0];
  const R = (s) => T(`StatefulSet chessd-redis: ${s}`);
  const rLabels = r.spec.template.metadata?.labels ?? {};
  const rc = r.spec.template.spec.containers.find((x) => x.name === "redis");
  if (!check(R("container redis"), rc)) return;
  check(R("1 replica"), r.spec.replicas === 1);
  check(R("redis:7 image"), /^(docker\.io\/(library\/)?)?redis:7([.-]|$|@)/.test(rc.image), rc.image);
  const args = (rc.args ?? []).map(String);
  check(R("appendonly yes, appendfsync everysec"), argValue(args, "--appendonly") === "yes" && argValue(args, "--appendfsync") === "everysec", args.join(" "));
  check(R("maxmemory-policy noeviction (games are never evicted)"), (argValue(args, "--maxmemory-policy") ?? "noeviction") === "noeviction");
  const maxmemory = redisBytes(argValue(args, "--maxmemory"));
  const memLimit = quantity(rc.resources?.limits?.memory);
  check(R("maxmemory set below 80% of the memory limit"), maxmemory > 0 && maxmemory <= 0.8 * memLimit, `${argValue(args, "--maxmemory")} vs ${rc.resources?.limits?.memory}`);
  check(R("readiness and liveness probes"), !!rc.readinessProbe && !!rc.livenessProbe);
  checkResources(R("container redis"), rc);
  const dataDir = argValue(args, "--dir") ?? "/data";
  const vct = (r.spec.volumeClaimTemplates ?? []).find((v) => (rc.volumeMounts ?? []).some((m) => m.name === v.metadata.name && m.mountPath === dataDir));
  if (check(R(`a volumeClaimTemplate mounted at ${dataDir}`), vct)) {
    check(R(`volume ${want.redis}`), vct.spec.resources?.requests?.storage === want.redis, vct.spec.resources?.requests?.storage);
    check(R("volume ReadWriteOnce"), (vct.spec.accessModes ?? []).includes("ReadWriteOnce"));
  }
  const headless = byKind(objects, "Service").find((s) => s.metadata.name === r.spec.serviceName);
  check(R(`headless Service ${r.spec.serviceName} selects it on 6379`),
    headless && headless.spec.clusterIP === "None" && selects(headless.spec.selector, rLabels) &&
      (headless.spec.ports ?? []).some((p) => p.port === 6379 && containerPort(rc, p.targetPort ?? p.port) === 6379));
  const url = /^redis:\/\/(?:[^@]*@)?([^:/]+)(?::(\d+))?/.exec(redisUrl ?? "");
  check(D(`CHESSD_REDIS_URL points at the Service ${r.spec.serviceName}:6379`), url && url[1] === r.spec.serviceName && (url[2] ?? "6379") === "6379", redisUrl);

  // Only chessd reaches Redis: every policy on the Redis pods admits only
  // pods that are chessd's (the API's or the engine workers'), on 6379.
  const chessdTemplates = [d, engine?.d].filter(Boolean);
  const chessdLabels = chessdTemplates.map((w) => w.spec.template.metadata?.labels ?? {});
  const otherTemplates = podTemplates.filter((w) => !chessdTemplates.includes(w)).map((w) => w.spec.template.metadata?.labels ?? {});
  const redisPolicies = policies.filter((p) => matches(p.spec.podSelector, rLabels));
  check(T("a NetworkPolicy selects the Redis pods for ingress"),
    redisPolicies.some((p) => (p.spec.policyTypes ?? ["Ingress"]).includes("Ingress")));
  const only6379 = (rule) => (rule.ports ?? []).length > 0 &&
    rule.ports.every((x) => containerPort(rc, x.port) === 6379 && (x.protocol ?? "TCP") === "TCP");
  for (const p of redisPolicies) {
    for (const [i, rule] of (p.spec.ingress ?? []).entries()) {
      const peers = rule.from ?? [];
      const onlyChessd = peers.length > 0 && peers.every((peer) => peer.podSelector && !peer.namespaceSelector && !peer.ipBlock &&
        chessdLabels.some((l) => matches(peer.podSelector, l)) && !otherTemplates.some((l) => matches(peer.podSelector, l)));
      check(T(`NetworkPolicy ${p.metadata.name} rule ${i} admits only chessd pods (API, engine) on TCP 6379`),
        onlyChessd && only6379(rule), JSON.stringify(rule));
    }
  }
  for (const [name, labels] of [["API", podLabels], ["engine", engine?.podLabels]]) {
    if (!labels) continue;
    check(T(`Redis admits the ${name} pods on TCP 6379`), redisPolicies.some((p) => (p.spec.ingress ?? []).some((rule) =>
      only6379(rule) && (rule.from ?? []).some((peer) => peer.podSelector && !peer.namespaceSelector && matches(peer.podSelector, labels)))));
  }
  if (engine) {
    // The engine workers' egress reaches these pods on 6379.
    check(T("the engine workers' egress admits the Redis pods on TCP 6379"), engine.egress.some((rule) =>
      (rule.to ?? []).some((peer) => peer.podSelector && !peer.namespaceSelector && matches(peer.podSelector, rLabels)) &&
      admitsPort(rule, rc, 6379)));
  }
}

// The memory limit of a container running workers engines (of each kind) of hash MB each.
function checkEngineMemory(D, c, workers, hash) {
  const need = (ENGINES_PER_WORKER * workers * (ENGINE_WORKER_MIB + hash) + ENGINE_POD_MIB) * 2 ** 20;
  check(D(`memory limit ${c.resources?.limits?.memory} holds ${workers} worker(s) of ${ENGINES_PER_WORKER} engines of ${hash} MB hash ` +
    `(${ENGINES_PER_WORKER} x ${workers} x (${ENGINE_WORKER_MIB} + ${hash}) + ${ENGINE_POD_MIB} MiB)`),
    Number.isInteger(hash) && hash >= 1 && quantity(c.resources?.limits?.memory) >= need);
}

// The engine workers: Deployment chessd-engine running `chessd engine`, its
// HPA, PDB and NetworkPolicy, none of the API's objects selecting its pods,
// and the pods configured as the API's are. Returns { d, podLabels, egress }
// or null when there is no such Deployment.
function checkEngine(target, objects, want, api) {
  const T = (s) => `${target}: ${s}`;
  const deployments = byKind(objects, "Deployment").filter((x) => x.metadata.name === "chessd-engine");
  if (!check(T("one Deployment chessd-engine"), deployments.length === 1)) return null;
  const d = deployments[0];
  const E = (s) => T(`Deployment chessd-engine: ${s}`);
  const w = want.engine;
  const podLabels = d.spec.template.metadata?.labels ?? {};
  const spec = d.spec.template.spec;
  const c = (spec.containers ?? []).find((x) => x.name === "engine");
  if (!check(E("has a container engine"), c)) return null;
  const configMaps = byKind(objects, "ConfigMap");
  const config = configOf(c, configMaps);

  // What runs, and as whom.
  const argv = [...(c.command ?? IMAGE_ENTRYPOINT), ...(c.args ?? [])];
  check(E("runs chessd engine (command chessd, args engine)"),
    argv[0]?.split("/").pop() === "chessd" && argv[1] === "engine" && (c.args ?? []).includes("engine") && !argv.includes("serve"),
    argv.join(" "));
  check(E(`replicas ${w.replicas}`), d.spec.replicas === w.replicas, d.spec.replicas);
  check(E("selector matches its pod labels"), matches(d.spec.selector, podLabels));
  check(E("its pods are not the API's: the selectors of chessd and chessd-engine are disjoint"),
    !matches(api.d.spec.selector, podLabels) && !matches(d.spec.selector, api.podLabels), JSON.stringify(podLabels));
  const ru = d.spec.strategy?.rollingUpdate ?? {};
  check(E("RollingUpdate maxUnavailable 0 (no rollout lowers the workers)"),
    d.spec.strategy?.type === "RollingUpdate" && (ru.maxUnavailable === 0 || ru.maxUnavailable === "0%"), JSON.stringify(d.spec.strategy));
  check(E("the API's image"), c.image === api.c.image, `${c.image} vs ${api.c.image}`);
  check(E("the API's pod security context"), canonical(spec.securityContext) === canonical(api.d.spec.template.spec.securityContext),
    `${canonical(spec.securityContext)} vs ${canonical(api.d.spec.template.spec.securityContext)}`);
  check(E("the API's container security context"), canonical(c.securityContext) === canonical(api.c.securityContext));
  check(E("no service account token, enableServiceLinks false"),
    spec.automountServiceAccountToken === false && spec.enableServiceLinks === false);

  // The same configuration and secrets as the API pods.
  check(E("envFrom the API's ConfigMap and Secret"), canonical(c.envFrom ?? []) === canonical(api.c.envFrom ?? []),
    `${canonical(c.envFrom)} vs ${canonical(api.c.envFrom)}`);
  const tokenEnv = (x) => canonical((x.env ?? []).find((e) => e.name === "CHESSD_TOKEN_SECRET") ?? null);
  check(E("CHESSD_TOKEN_SECRET from the API's Secret key"), tokenEnv(c) !== "null" && tokenEnv(c) === tokenEnv(api.c), tokenEnv(c));
  for (const e of (api.c.env ?? []).filter((x) => x.name.startsWith("CHESSD_REDIS"))) {
    check(E(`${e.name} as the API's (${e.valueFrom ? "from a Secret" : "a literal"})`),
      (c.env ?? []).some((x) => canonical(x) === canonical(e)));
  }
  check(E("mounts the API's volumes, at the same paths"),
    canonical(c.volumeMounts ?? []) === canonical(api.c.volumeMounts ?? []) && canonical(spec.volumes ?? []) === canonical(api.d.spec.template.spec.volumes ?? []));
  checkSecretFiles(E, spec, c, config, byKind(objects, "Secret"), want.redisFiles ?? [], want.noRedisFiles ?? [], want.secret);
  check(E(`CHESSD_ENGINE ${CHESSD_ENGINE_PATH} (the image's Stockfish)`), setting(c, config, "CHESSD_ENGINE") === CHESSD_ENGINE_PATH,
    setting(c, config, "CHESSD_ENGINE"));
  check(E("CHESSD_READY_REQUIRES_REDIS (a worker without Redis takes no jobs, and says so)"),
    truthy(setting(c, config, "CHESSD_READY_REQUIRES_REDIS")), setting(c, config, "CHESSD_READY_REQUIRES_REDIS"));
  check(E("CHESSD_REQUIRE_NOEVICTION (unready while Redis may evict games)"),
    truthy(setting(c, config, "CHESSD_REQUIRE_NOEVICTION")), setting(c, config, "CHESSD_REQUIRE_NOEVICTION"));

  // Ports and probes: CHESSD_PORT alone, the probes on it.
  const port = Number(setting(c, config, "CHESSD_PORT") ?? CHESSD_PORT);
  check(E(`CHESSD_PORT ${CHESSD_PORT}, a container port`), port === CHESSD_PORT &&
    (c.ports ?? []).some((p) => p.containerPort === CHESSD_PORT && (p.protocol ?? "TCP") === "TCP"));
  check(E("no probe port (CHESSD_PROBE_PORT 0 or unset, no container port for it)"),
    Number(setting(c, config, "CHESSD_PROBE_PORT") ?? 0) === 0 && (c.ports ?? []).every((p) => p.containerPort === CHESSD_PORT),
    setting(c, config, "CHESSD_PROBE_PORT"));
  for (const [probe, path] of [["readinessProbe", "/readyz"], ["livenessProbe", "/healthz"], ["startupProbe", "/healthz"]]) {
    const p = c[probe]?.httpGet;
    check(E(`${probe} GET ${path} on port ${CHESSD_PORT}`), p && p.path === path && containerPort(c, p.port) === CHESSD_PORT,
      JSON.stringify(c[probe]));
  }
  check(E("liveness probe is not /readyz (a Redis outage must restart nothing)"), c.livenessProbe?.httpGet?.path !== "/readyz");
  const ann = d.spec.template.metadata?.annotations ?? {};
  check(E("Prometheus scrape annotations"),
    ann["prometheus.io/scrape"] === "true" && ann["prometheus.io/port"] === String(CHESSD_PORT) && ann["prometheus.io/path"] === "/metrics",
    JSON.stringify(ann));
  check(E("spread across nodes"),
    (spec.topologySpreadConstraints ?? []).some((t) => t.topologyKey === "kubernetes.io/hostname" && matches(t.labelSelector, podLabels)));

  // One worker per CPU, requests equal to limits.
  if (checkResources(E("container engine"), c)) {
    const r = c.resources;
    check(E("requests equal limits (Guaranteed QoS)"),
      quantity(r.requests.cpu) === quantity(r.limits.cpu) && quantity(r.requests.memory) === quantity(r.limits.memory), JSON.stringify(r));
  }
  const workers = Number(setting(c, config, "CHESSD_ENGINE_WORKERS"));
  const cpus = quantity(c.resources?.limits?.cpu);
  check(E(`CHESSD_ENGINE_WORKERS ${w.workers}`), workers === w.workers, setting(c, config, "CHESSD_ENGINE_WORKERS"));
  check(E(`CHESSD_ENGINE_WORKERS ${workers} equals the CPU limit ${c.resources?.limits?.cpu} (one single-threaded engine per CPU)`),
    Number.isInteger(cpus) && workers === cpus);
  checkEngineMemory(E, c, workers, Number(setting(c, config, "CHESSD_ENGINE_HASH") ?? ENGINE_HASH_DEFAULT_MB));
  const maxThinkMs = Number(setting(c, config, "CHESSD_ENGINE_MAX_THINK_MS"));
  const grace = Number(setting(c, config, "CHESSD_SHUTDOWN_GRACE") ?? 10);
  const tgps = spec.terminationGracePeriodSeconds ?? 30;
  check(E(`terminationGracePeriodSeconds ${tgps} > CHESSD_SHUTDOWN_GRACE ${grace} s + CHESSD_ENGINE_MAX_THINK_MS ${maxThinkMs} ms`),
    maxThinkMs > 0 && tgps > grace + maxThinkMs / 1000);

  // No Service routes to the engine pods; the API's own objects leave them alone.
  for (const svc of byKind(objects, "Service")) {
    check(T(`Service ${svc.metadata.name} does not select the engine pods`), !selects(svc.spec.selector, podLabels), JSON.stringify(svc.spec.selector));
  }
  const svc = byKind(objects, "Service").find((x) => x.metadata.name === "chessd");
  if (svc) {
    check(T("Service chessd's selector and the engine pods' labels are disjoint (it selects the API pods only)"),
      selects(svc.spec.selector, api.podLabels) && !selects(svc.spec.selector, podLabels));
  }

  // HPA
  const hpas = byKind(objects, "HorizontalPodAutoscaler");
  const hpa = hpas.find((h) => h.spec.scaleTargetRef?.name === "chessd-engine");
  if (check(T("HorizontalPodAutoscaler for chessd-engine"), hpa)) {
    check(T("engine HPA is autoscaling/v2 on Deployment chessd-engine"),
      hpa.apiVersion === "autoscaling/v2" && hpa.spec.scaleTargetRef.kind === "Deployment" && hpa.spec.scaleTargetRef.apiVersion === "apps/v1");
    check(T(`engine HPA min ${w.hpaMin} max ${w.hpaMax}`), hpa.spec.minReplicas === w.hpaMin && hpa.spec.maxReplicas === w.hpaMax,
      `${hpa.spec.minReplicas}..${hpa.spec.maxReplicas}`);
    const cpu = (hpa.spec.metrics ?? []).filter((m) => m.type === "Resource" && m.resource?.name === "cpu" && m.resource.target?.type === "Utilization");
    check(T("engine HPA on CPU utilization, between 50% and 80%"), cpu.length === 1 && cpu[0].resource.target.averageUtilization >= 50 &&
      cpu[0].resource.target.averageUtilization <= 80, JSON.stringify(hpa.spec.metrics));
    check(T("Deployment chessd-engine replicas within its HPA range"), d.spec.replicas >= hpa.spec.minReplicas && d.spec.replicas <= hpa.spec.maxReplicas);
  }
  check(T("one HPA targets chessd-engine, one chessd"),
    hpas.filter((h) => h.spec.scaleTargetRef?.name === "chessd-engine").length === 1 && hpas.filter((h) => h.spec.scaleTargetRef?.name === "chessd").length === 1);

  // PDB
  const pdbs = byKind(objects, "PodDisruptionBudget").filter((p) => matches(p.spec.selector, podLabels));
  if (check(T("one PodDisruptionBudget selects the engine pods"), pdbs.length === 1)) {
    const p = pdbs[0].spec;
    check(T("engine PDB does not select the API pods"), !matches(p.selector, api.podLabels));
    const allowed = p.maxUnavailable !== undefined ? p.maxUnavailable : w.hpaMin - p.minAvailable;
    check(T(`engine PDB lets a drain evict a pod at ${w.hpaMin} replica(s)`), Number.isInteger(allowed) && allowed >= 1, JSON.stringify(p));
    check(T("engine PDB evicts unready pods (unhealthyPodEvictionPolicy AlwaysAllow: they are unready while Redis is down)"),
      p.unhealthyPodEvictionPolicy === "AlwaysAllow");
  }

  // NetworkPolicy: in, CHESSD_PORT only (metrics; the probes come from the
  // node); out, Redis and DNS only.
  const policies = byKind(objects, "NetworkPolicy").filter((p) => matches(p.spec.podSelector, podLabels));
  const ingress = policies.filter((p) => (p.spec.policyTypes ?? ["Ingress"]).includes("Ingress")).flatMap((p) => p.spec.ingress ?? []);
  const egressPolicies = policies.filter((p) => (p.spec.policyTypes ?? []).includes("Egress"));
  const egress = egressPolicies.flatMap((p) => p.spec.egress ?? []);
  check(T("a NetworkPolicy selects the engine pods for ingress and egress"),
    policies.some((p) => (p.spec.policyTypes ?? ["Ingress"]).includes("Ingress")) && egressPolicies.length > 0);
  check(T(`the engine pods admit TCP ${CHESSD_PORT} (metrics)`), ingress.some((r) => admitsPort(r, c, CHESSD_PORT)));
  check(T(`the engine pods admit nothing but TCP ${CHESSD_PORT}`), ingress.every((r) => (r.ports ?? []).length > 0 &&
    r.ports.every((x) => (x.protocol ?? "TCP") === "TCP" && x.endPort === undefined && containerPort(c, x.port) === CHESSD_PORT)),
    JSON.stringify(ingress));
  const isDns = (r) => (r.ports ?? []).length > 0 && r.ports.every((x) => x.port === 53 && x.endPort === undefined);
  check(T("the engine pods may resolve names (UDP 53)"), egress.some((r) => isDns(r) && admitsPort(r, c, 53, "UDP")));
  for (const [i, r] of egress.entries()) {
    if (isDns(r)) continue;
    const ports = r.ports ?? [];
    let ok = ports.length > 0 && ports.every((x) => (x.protocol ?? "TCP") === "TCP" && x.endPort === undefined);
    if (want.redis !== null) {
      ok = ok && ports.every((x) => x.port === 6379) && (r.to ?? []).length > 0 && r.to.every((peer) => peer.podSelector &&
        !peer.namespaceSelector && !peer.ipBlock && matches(peer.podSelector, { "app.kubernetes.io/name": "redis", "app.kubernetes.io/instance": "chessd-redis" }));
    }
    check(T(`engine egress rule ${i} is DNS or Redis alone (listed TCP ports${want.redis !== null ? ", the chessd-redis pods on 6379" : ""})`),
      ok, JSON.stringify(r));
  }
  if (want.redisUrlFromSecret) {
    // The Redis the Secret names (run.sh writes a test URL) is reachable.
    const ref = (c.env ?? []).find((e) => e.name === "CHESSD_REDIS_URL")?.valueFrom?.secretKeyRef;
    const secret = ref && byKind(objects, "Secret").find((x) => x.metadata.name === ref.name);
    const b64 = secret?.data?.[ref.key];
    const url = b64 ? Buffer.from(b64, "base64").toString("utf8") : secret?.stringData?.[ref?.key];
    const ports = redisUrlPorts(url);
    // A Redis outside the cluster is an address: a rule naming pods cannot reach it.
    const toAddresses = (r) => (r.to ?? []).length === 0 || r.to.some((peer) => peer.ipBlock);
    check(T(`the engine workers' egress admits the Redis URL's port(s) ${ports.join(",")} at an address outside the cluster`),
      ports.length > 0 && ports.every((port) => egress.some((r) => !isDns(r) && toAddresses(r) && admitsPort(r, c, port))),
      url?.replace(/:[^:@/]*@/, ":***@"));
  }
  return { d, podLabels, egress };
}

// ---------------------------------------------------------------- input

function load(file) {
  // YAML 1.1, as kubectl reads it: an unquoted yes/no/on/off is a boolean.
  const docs = parseAllDocuments(readFileSync(file, "utf8"), { version: "1.1" });
  const objects = [];
  for (const [i, doc] of docs.entries()) {
    if (doc.errors.length) {
      check(`${file} document ${i} parses`, false, doc.errors[0].message);
      continue;
    }
    const o = doc.toJS();
    if (check(`${file} document ${i} is an object with apiVersion, kind and name`,
      o && typeof o === "object" && o.apiVersion && o.kind && o.metadata?.name, JSON.stringify(o)?.slice(0, 80))) {
      objects.push(o);
    }
  }
  return objects;
}

async function selfTest() {
  const { Deployment } = await import("kubernetes-models/apps/v1");
  const good = {
    apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "x", labels: { a: "b" } },
    spec: { selector: { matchLabels: { a: "b" } }, template: { metadata: { labels: { a: "b" } },
      spec: { containers: [{ name: "c", image: "i", resources: { limits: { cpu: "1" } }, lifecycle: { preStop: { sleep: { seconds: 5 } } } }] } } },
  };
  check("self-test: a valid Deployment has no unknown fields", unknownFields(Deployment, good).length === 0, unknownFields(Deployment, good).join(","));
  const typo = structuredClone(good);
  typo.spec.template.spec.containers[0].readinesProbe = {};
  typo.spec.strategy = { rollingUpdate: { maxUnavailabel: 0 } };
  const found = unknownFields(Deployment, typo).sort().join(",");
  check("self-test: misspelled fields are found", found === "spec.strategy.rollingUpdate.maxUnavailabel,spec.template.spec.containers[0].readinesProbe", found);
  let threw = false;
  try {
    new Deployment({ ...good, spec: { ...good.spec, replicas: "3" } }).validate();
  } catch {
    threw = true;
  }
  check("self-test: a wrong type fails the schema", threw);
  check("self-test: an unknown kind has no model", (await modelFor("apps/v1", "Deploymnet")) === null && (await modelFor("example.com/v1", "Widget")) === null);
  const ports = redisUrlPorts("redis+cluster://:p%40ss@a:7001,b,[::1]:7003").join(",");
  check("self-test: a Redis URL's ports, 6379 where none is given", ports === "7001,6379,7003" &&
    redisUrlPorts("rediss://h:6380/0").join(",") === "6380" && redisUrlPorts("none").length === 0, ports);
  const rule = { ports: [{ protocol: "TCP", port: 6379 }, { protocol: "TCP", port: 7000, endPort: 7005 }] };
  check("self-test: a rule's ports admit only what they list", admitsPort(rule, {}, 6379) && admitsPort(rule, {}, 7003) &&
    !admitsPort(rule, {}, 6380) && !admitsPort(rule, {}, 6379, "UDP") && admitsPort({}, {}, 1234));
  check("self-test: canonical JSON ignores key order", canonical({ a: 1, b: [{ c: 2, d: 3 }] }) === canonical({ b: [{ d: 3, c: 2 }], a: 1 }) &&
    canonical({ a: 1 }) !== canonical({ a: "1" }));
  const yes = parseAllDocuments("a: yes\nb: \"yes\"\n", { version: "1.1" })[0].toJS();
  check("self-test: YAML 1.1 reads an unquoted yes as a boolean", yes.a === true && yes.b === "yes");
}

const argv = process.argv.slice(2);
const targets = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--passed") passed += Number(argv[++i]);
  else if (argv[i] === "--failed") failed += Number(argv[++i]);
  else if (argv[i] === "--self-test") targets.push(null);
  else {
    const eq = argv[i].indexOf("=");
    if (eq <= 0) {
      console.error(`usage: node validate.mjs [--self-test] [--passed N --failed N] TARGET=FILE...`);
      process.exit(2);
    }
    targets.push([argv[i].slice(0, eq), argv[i].slice(eq + 1)]);
  }
}
for (const t of targets) {
  if (t === null) {
    await selfTest();
    continue;
  }
  const [target, file] = t;
  const objects = load(file);
  for (const o of objects) await validateSchema(`${target}: ${o.kind} ${o.metadata.name}`, o);
  checkTarget(target, objects);
}
console.log(`k8s: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
