// The nginx.conf of one run, rendered from the options alone (no file is read here):
// the Node server's routes, headers, content types and limits, with the Sammy module
// on /media/. Everything nginx writes (pid, error log, temporary files, the telemetry
// lines unless --log FILE) stays in one folder, so nothing under /etc/nginx or
// /var/lib/nginx is read or changed, and removing the folder removes the run.
import { join } from 'node:path';
import { CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS } from '@sammy/server/app';
import { mediaCacheControl, MEDIA_CONTENT_TYPES, MEDIA_PREFIX } from '@sammy/server/media';
import { DEFAULT_LIMITS } from '@sammy/server/options';
import { NginxError, SAFE_PATH_ACCEPTED, type NginxServerOptions } from './options.js';

/** Where one run's files live: the folder is nginx's prefix (`-p`). */
export interface NginxLayout {
  prefix: string;
  conf: string;
  pidFile: string;
  errorLog: string;
  /** The module's telemetry lines: --log FILE, else a file in the folder. */
  telemetryLog: string;
}

export function nginxLayout(prefix: string, logFile: string | null): NginxLayout {
  return {
    prefix,
    conf: join(prefix, 'nginx.conf'),
    pidFile: join(prefix, 'nginx.pid'),
    errorLog: join(prefix, 'error.log'),
    telemetryLog: logFile ?? join(prefix, 'telemetry.jsonl'),
  };
}

export interface NginxConfigInput {
  options: NginxServerOptions;
  /** ngx_http_sammy_module.so (buildNginxModule()). */
  modulePath: string;
  layout: NginxLayout;
  /**
   * The workers' user when nginx starts as root (which would otherwise run them as
   * `nobody`, unable to read a media folder only its owner may read); null otherwise.
   */
  user: string | null;
  /** worker_rlimit_nofile: at most what this process may raise its limit to. */
  openFilesLimit: number;
}

/** Connections per worker: 10,000 paced viewers fit in one. */
export const WORKER_CONNECTIONS = 16_384;
/** A connection holds its socket and, while it sends, the file: two descriptors, and a margin. */
export const WANTED_OPEN_FILES = 4 * WORKER_CONNECTIONS;
/** The files the page is built into (`npm run build -w @sammy/player`), with the types the Node server gives them (`mime`). */
export const PAGE_CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'application/javascript',
  '.mjs': 'application/javascript',
  '.css': 'text/css',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.ico': 'image/vnd.microsoft.icon',
  '.png': 'image/png',
  '.txt': 'text/plain',
};
/** The page's textual types, which the Node server sends with `; charset=utf-8` (nginx adds it to text/html itself). */
const PAGE_CHARSET_TYPES = ['application/javascript', 'text/css', 'application/json', 'text/plain'];
export const NOT_BUILT_TEXT =
  'The player page is not built. Run `npm run build` in the repository (or `npm run build -w @sammy/player`), then reload.\n' +
  `The media is served at ${MEDIA_PREFIX}manifest.mpd.\n`;

const UNSAFE_IN_CONFIG = /["\\$\u0000-\u001f\u007f]/;

function unwritable(text: string, why: string): NginxError {
  return new NginxError('SAMMY_NGINX_FAILED', `cannot write ${JSON.stringify(text)} into nginx.conf (${why})`);
}

/**
 * A path (or `name=path` parameter) in double quotes. The options were checked; this
 * refuses what else comes in (the temporary folder's path, from TMPDIR).
 */
export function quoted(text: string): string {
  if (UNSAFE_IN_CONFIG.test(text)) throw unwritable(text, SAFE_PATH_ACCEPTED);
  return `"${text}"`;
}

/** A fixed text for nginx.conf in double quotes, with nginx's escapes (it reads \\n as a newline); no variables. */
function literal(text: string): string {
  if (text.includes('$')) throw unwritable(text, '$ would start a variable in a fixed text');
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\n/g, '\\n')}"`;
}

const onOff = (on: boolean): string => (on ? 'on' : 'off');

/** `listen`'s address: IPv6 in brackets, and `::` for both families as the Node server binds it. */
export function listenAddress(host: string, port: number): string {
  if (host === '::') return `[::]:${port} ipv6only=off`;
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Every sammy_* directive, written out from the options (none left to the module's defaults). */
export function sammyDirectives(o: NginxServerOptions, telemetryLog: string): string[] {
  return [
    'sammy on;',
    `sammy_pacing ${onOff(o.pacing)};`,
    `sammy_min_rate_kbps ${o.minRateKbps};`,
    `sammy_max_rate_kbps ${o.maxRateKbps};`,
    `sammy_spiral_guard ${onOff(o.spiralGuard)};`,
    `sammy_spiral_guard_multiplier ${o.spiralGuardMultiplier};`,
    `sammy_query_cmcd ${onOff(o.honourQueryCmcd)};`,
    `sammy_max_cmcd_bytes ${DEFAULT_LIMITS.maxCmcdBytes};`,
    `sammy_tail_hold ${onOff(o.tailHold)};`,
    `sammy_telemetry_log ${quoted(telemetryLog)};`,
  ];
}

/** `/healthz`'s body, as the Node server's (its `pid` is the worker that answered). */
function healthBody(o: NginxServerOptions): string {
  const fields = {
    status: 'ok',
    server: 'nginx',
    pacing: o.pacing,
    spiralGuard: o.spiralGuard,
    spiralGuardMultiplier: o.spiralGuardMultiplier,
    tailHold: o.tailHold,
    tls: o.tls !== null,
    http2: o.http2,
    workers: o.workers,
  };
  return `${JSON.stringify(fields).slice(0, -1)},"pid":$pid}`;
}

/** CORS as the Node server's --cors-origin (@fastify/cors): maps that give the preflight's headers to OPTIONS only. */
function corsMaps(): string[] {
  const onlyFor = (name: string, options: string, others: string): string[] => [
    `map $request_method ${name} {`,
    `    OPTIONS ${literal(options)};`,
    `    default ${literal(others)};`,
    '}',
  ];
  return [
    ...onlyFor('$sammy_cors_allow_methods', 'GET, HEAD', ''),
    ...onlyFor('$sammy_cors_allow_headers', CORS_ALLOWED_HEADERS.join(', '), ''),
    ...onlyFor('$sammy_cors_max_age', '600', ''),
    ...onlyFor('$sammy_cors_expose_headers', '', CORS_EXPOSED_HEADERS.join(', ')),
  ];
}

function corsHeaders(origin: string): string[] {
  return [
    `add_header Access-Control-Allow-Origin ${literal(origin)} always;`,
    // One origin named: caches must keep answers to other origins apart.
    ...(origin === '*' ? [] : ['add_header Vary Origin always;']),
    'add_header Access-Control-Allow-Methods $sammy_cors_allow_methods always;',
    'add_header Access-Control-Allow-Headers $sammy_cors_allow_headers always;',
    'add_header Access-Control-Max-Age $sammy_cors_max_age always;',
    'add_header Access-Control-Expose-Headers $sammy_cors_expose_headers always;',
  ];
}

function block(head: string, lines: string[]): string[] {
  return [`${head} {`, ...lines.map((l) => (l === '' ? '' : `    ${l}`)), '}'];
}

function server(input: NginxConfigInput): string[] {
  const { options: o, layout } = input;
  const methods = o.corsOrigin === null ? 'GET|HEAD' : 'GET|HEAD|OPTIONS';
  const listen = `listen ${listenAddress(o.host, o.port)}${o.tls === null ? '' : ' ssl'}${o.http2 ? ' http2' : ''};`;
  const tls =
    o.tls === null
      ? []
      : [
          `ssl_certificate ${quoted(o.tls.certFile)};`,
          `ssl_certificate_key ${quoted(o.tls.keyFile)};`,
          'ssl_protocols TLSv1.2 TLSv1.3;',
          'ssl_session_cache shared:sammy_tls:10m;',
          'ssl_session_timeout 1h;',
        ];
  return block('server', [
    listen,
    ...tls,
    '',
    // Server level, so every location inherits them (none sets headers of its own).
    'add_header Cache-Control $sammy_cache_control;',
    'add_header Allow $sammy_allow always;',
    ...(o.corsOrigin === null ? [] : corsHeaders(o.corsOrigin)),
    ...(o.corsOrigin === null ? [] : ['if ($request_method = OPTIONS) {', '    return 204;', '}']),
    `if ($request_method !~ ^(?:${methods})$) {`,
    '    return 405;',
    '}',
    '',
    ...block(`location ${MEDIA_PREFIX}`, [
      `alias ${quoted(`${o.mediaDir}/`)};`,
      // nginx cannot tell a link that stays in the folder from one that leaves it: it refuses every link below the folder.
      `disable_symlinks on ${quoted(`from=${o.mediaDir}`)};`,
      ...sammyDirectives(o, layout.telemetryLog),
    ]),
    '',
    // Dotfiles, as the Node server: 403.
    ...block('location ~ /\\.', ['return 403;']),
    '',
    ...block('location = /healthz', ['default_type "application/json; charset=utf-8";', `return 200 '${healthBody(o)}';`]),
    '',
    ...block('location = /metrics', ['sammy_metrics;']),
    '',
    ...block('location = /nginx_status', ['stub_status;', 'allow 127.0.0.1;', 'allow ::1;', 'deny all;']),
    '',
    ...block('location /', [
      `root ${quoted(o.playerDir)};`,
      `disable_symlinks on ${quoted(`from=${o.playerDir}`)};`,
      'charset utf-8;',
      `charset_types ${PAGE_CHARSET_TYPES.join(' ')};`,
      // Checked per request: the page may be built while nginx runs.
      ...block('location = /', ['try_files /index.html @player_not_built;']),
    ]),
    '',
    ...block('location @player_not_built', ['default_type "text/plain; charset=utf-8";', `return 503 ${literal(NOT_BUILT_TEXT)};`]),
  ]);
}

/** nginx.conf for `input.options`, with the module loaded from `input.modulePath`. */
export function renderNginxConfig(input: NginxConfigInput): string {
  const { options: o, layout } = input;
  const limits = DEFAULT_LIMITS;
  const types = { ...PAGE_CONTENT_TYPES, ...MEDIA_CONTENT_TYPES };
  // The Node server's header for each media type; every other path (and the page) gets its default, no-cache.
  const cacheControl = Object.keys(MEDIA_CONTENT_TYPES)
    .map((ext) => [ext, mediaCacheControl(`file${ext}`)] as const)
    .filter(([, value]) => value !== 'no-cache')
    .map(([ext, value]) => `~^${MEDIA_PREFIX}.*\\${ext}$ ${literal(value)};`);
  const lines = [
    '# Written by @sammy/nginx (npm run nginx) for one run; removed with its folder when it stops.',
    `load_module ${quoted(input.modulePath)};`,
    ...(input.user === null ? [] : [`user ${input.user};`]),
    `worker_processes ${o.workers};`,
    `worker_rlimit_nofile ${input.openFilesLimit};`,
    `pid ${quoted(layout.pidFile)};`,
    `error_log ${quoted(layout.errorLog)} notice;`,
    // A graceful stop (SIGQUIT) closes what is still open after a second: responses in flight get their (aborted) lines.
    'worker_shutdown_timeout 1s;',
    '',
    ...block('events', [`worker_connections ${WORKER_CONNECTIONS};`]),
    '',
    ...block('http', [
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `${t}_temp_path ${quoted(join(layout.prefix, `${t}_temp`))};`),
      '',
      'sendfile on;',
      // The response head and the file's first bytes in full packets; the module uncorks before it
      // holds a paced body's last byte (native/README.md "Per response").
      'tcp_nopush on;',
      'server_tokens off;',
      // The module writes a telemetry line per media response instead.
      'access_log off;',
      // The Node server's limits (server/src/options.ts DEFAULT_LIMITS).
      `client_header_timeout ${limits.headersTimeoutMs}ms;`,
      `client_body_timeout ${limits.requestTimeoutMs}ms;`,
      `keepalive_timeout ${limits.keepAliveTimeoutMs}ms;`,
      `send_timeout ${limits.idleTimeoutMs}ms;`,
      'reset_timedout_connection on;',
      // One buffer of maxHeaderBytes: a request head much larger than 16 KB is refused.
      `large_client_header_buffers 1 ${limits.maxHeaderBytes};`,
      '',
      ...block('types', Object.entries(types).map(([ext, type]) => `${type} ${ext.slice(1)};`)),
      'default_type application/octet-stream;',
      '',
      // Segments never change under a name; manifests, playlists, segments.json and the page are revalidated.
      ...block('map $uri $sammy_cache_control', [...cacheControl, 'default "no-cache";']),
      ...block('map $request_method $sammy_allow', [
        'GET "";',
        'HEAD "";',
        ...(o.corsOrigin === null ? [] : ['OPTIONS "";']),
        'default "GET, HEAD";',
      ]),
      ...(o.corsOrigin === null ? [] : corsMaps()),
      '',
      ...server(input),
    ]),
    '',
  ];
  return lines.join('\n');
}
