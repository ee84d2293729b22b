// The Traffic Server configuration of one edge: a reverse proxy with a disk cache in
// front of one origin, the sammy_edge remap plugin on its one rule. Everything lives
// in one folder (a runroot: Traffic Server reads the layout from runroot.yaml), so
// nothing under /etc/trafficserver is read or changed, and removing the folder
// removes the edge.
import { join } from 'node:path';
import type { EdgeOptions } from './options.js';

/** Where Debian's trafficserver package keeps its binaries and stock plugins. */
export const ATS_BINDIR = '/usr/bin';
export const ATS_PLUGIN_DIR = '/usr/lib/trafficserver/modules';
/** The plugin log Traffic Server writes (TSTextLogObjectCreate adds `.log`). */
export const TELEMETRY_LOG_NAME = 'sammy_edge.log';
/** Plugin counters (stats_over_http), answered to loopback clients only. */
export const STATS_PATH = '_sammy_edge_stats';

export interface AtsLayout {
  root: string;
  etc: string;
  log: string;
  run: string;
  cache: string;
  runroot: string;
  telemetryLog: string;
}

export function atsLayout(root: string): AtsLayout {
  const etc = join(root, 'etc');
  const log = join(root, 'log');
  return { root, etc, log, run: join(root, 'run'), cache: join(root, 'cache'), runroot: join(root, 'runroot.yaml'), telemetryLog: join(log, TELEMETRY_LOG_NAME) };
}

/** Traffic Server's port descriptor: the port, bound to one address or to all. */
export function portDescriptor(host: string, port: number): string {
  if (host === '0.0.0.0') return `${port}`;
  if (host === '::') return `${port}:ipv6`;
  return host.includes(':') ? `${port}:ipv6:ip-in=${host}` : `${port}:ip-in=${host}`;
}

/** The plugin's arguments (remap.config @pparam), checked again by the plugin. */
export function pluginArgs(o: Pick<EdgeOptions, 'minRateKbps' | 'maxRateKbps' | 'honourQueryCmcd' | 'spiralGuard' | 'spiralGuardMultiplier'>): string[] {
  const onOff = (on: boolean): string => (on ? 'on' : 'off');
  return [
    `--min-rate-kbps=${o.minRateKbps}`,
    `--max-rate-kbps=${o.maxRateKbps}`,
    `--query-cmcd=${onOff(o.honourQueryCmcd)}`,
    `--spiral-guard=${onOff(o.spiralGuard)}`,
    `--spiral-guard-multiplier=${o.spiralGuardMultiplier}`,
  ];
}

/** Each file of the configuration, by path relative to the folder. */
export function atsConfigFiles(layout: AtsLayout, pluginPath: string, o: EdgeOptions): Record<string, string> {
  const records = [
    ['proxy.config.http.server_ports', 'STRING', portDescriptor(o.host, o.port)],
    // Do not change user: the folder belongs to whoever started the edge (root may not be named).
    ['proxy.config.admin.user_id', 'STRING', '#-1'],
    // traffic_crashlog cannot look up the user "#-1"; a crash still shows on stderr.
    ['proxy.config.crash_log_helper', 'STRING', '/bin/true'],
    ['proxy.config.reverse_proxy.enabled', 'INT', '1'],
    ['proxy.config.url_remap.remap_required', 'INT', '1'],
    // Open the port only once the cache is up, so the first request is already cached.
    ['proxy.config.http.wait_for_cache', 'INT', '1'],
    ['proxy.config.http.cache.http', 'INT', '1'],
    // As the Node server: idle keep-alive connections close after 10 s.
    ['proxy.config.http.keep_alive_no_activity_timeout_in', 'INT', '10'],
    ['proxy.config.http.insert_response_via_str', 'INT', '0'],
    ['proxy.config.log.logging_enabled', 'INT', '3'],
    // The telemetry log is read while the edge runs (and may be a link to --log FILE): never rolled.
    ['proxy.config.log.rolling_enabled', 'INT', '0'],
    ['proxy.config.log.max_secs_per_buffer', 'INT', '1'],
    // Below the usual descriptor limit, so Traffic Server does not warn at every start.
    ['proxy.config.net.connections_throttle', 'INT', '10000'],
    ['proxy.config.diags.debug.enabled', 'INT', '0'],
  ];
  const remap = [
    // One rule for every host name: the edge serves one origin.
    `map / ${o.originUrl}/ @plugin=${pluginPath} ${pluginArgs(o).map((a) => `@pparam=${a}`).join(' ')}`,
  ];
  return {
    'runroot.yaml': [
      `prefix: ${layout.root}`,
      'exec_prefix: /usr',
      `bindir: ${ATS_BINDIR}`,
      'sbindir: /usr/sbin',
      `sysconfdir: ${layout.etc}`,
      `datadir: ${layout.cache}`,
      'includedir: /usr/include',
      'libdir: /usr/lib/trafficserver',
      `libexecdir: ${ATS_PLUGIN_DIR}`,
      `localstatedir: ${layout.run}`,
      `runtimedir: ${layout.run}`,
      `logdir: ${layout.log}`,
      `cachedir: ${layout.cache}`,
      '',
    ].join('\n'),
    'etc/records.config': records.map(([name, type, value]) => `CONFIG ${name} ${type} ${value}\n`).join(''),
    'etc/remap.config': `${remap.join('\n')}\n`,
    'etc/storage.config': `${layout.cache} ${o.cacheSizeMb}M\n`,
    'etc/plugin.config': `stats_over_http.so ${join(layout.etc, 'stats.config')}\n`,
    'etc/stats.config': `path=${STATS_PATH}\nallow_ip=127.0.0.1\nallow_ip6=::1\n`,
    // Every client may GET and HEAD (the edge is the viewers' server); other methods are refused.
    'etc/ip_allow.yaml': ['ip_allow:', ...['0/0', '::/0'].flatMap((range) => ['  - apply: in', `    ip_addrs: ${range}`, '    action: allow', '    methods: [GET, HEAD]']), ''].join('\n'),
    // Present and empty: the stock behaviour, without a warning per missing file.
    ...Object.fromEntries(
      ['cache.config', 'parent.config', 'hosting.config', 'volume.config', 'ssl_multicert.config', 'sni.yaml', 'strategies.yaml', 'logging.yaml'].map((f) => [`etc/${f}`, '']),
    ),
  };
}
