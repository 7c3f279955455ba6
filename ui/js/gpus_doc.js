// GET /v1/gpus in either of its two shapes, seen alike as a list of hosts.
// `gleaner up` answers gleaner.gpus/v1 (docs/gpus-json.md): one host, each
// GPU with its verdict, evidence and processes. A coordinator (`gleaner
// server`, docs/cluster.md) answers gleaner.cluster/v1: every agent's host
// with its health (up, silent, lost) and last report, each GPU with its
// state and reason as its agent last reported them and, while the host is
// up, its processes and verdict with evidence.

export const CLUSTER_SCHEMA = 'gleaner.cluster/v1';

export function isCluster(doc) {
  return doc?.schema === CLUSTER_SCHEMA;
}

// Seconds from `iso` to `reference` (both RFC 3339), or null when `iso` is
// missing. On the coordinator's clock where it says when it answered, so
// that the reader's clock being off does not age a host.
function ageOf(iso, reference) {
  const at = Date.parse(iso ?? '');
  if (Number.isNaN(at)) return null;
  const now = Date.parse(reference ?? '');
  return Math.max(0, ((Number.isNaN(now) ? Date.now() : now) - at) / 1000);
}

// Each host as {host, gpus, cluster, health, reportAgeS, jobs, source,
// driver}. A single host's document gives one, with health, reportAgeS and
// jobs null; a coordinator's gives one per agent, with source and driver
// empty.
export function hostsOf(doc) {
  if (!doc) return [];
  if (!isCluster(doc)) {
    return [
      {
        host: doc.host ?? '',
        gpus: doc.gpus ?? [],
        cluster: false,
        health: null,
        reportAgeS: null,
        jobs: null,
        source: doc.source ?? '',
        driver: doc.driver?.version ?? '',
      },
    ];
  }
  return (doc.hosts ?? []).map((h) => ({
    host: h.host ?? '',
    gpus: h.gpus ?? [],
    cluster: true,
    health: h.health ?? 'lost',
    reportAgeS: ageOf(h.last_report, doc.taken_at),
    jobs: h.jobs ?? 0,
    source: '',
    driver: '',
  }));
}

// The most GPUs of one model on one host: the largest job on one model
// that a single host could run (at least 1).
export function mostOfOneModel(doc) {
  let most = 1;
  for (const host of hostsOf(doc)) {
    const counts = new Map();
    for (const gpu of host.gpus) if (gpu.name) counts.set(gpu.name, (counts.get(gpu.name) ?? 0) + 1);
    most = Math.max(most, ...counts.values());
  }
  return most;
}
