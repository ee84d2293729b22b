// The nginx.conf rendered from the options: every directive the options decide, and what it refuses to write.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_LIMITS } from '@sammy/server/options';
import {
  listenAddress,
  nginxLayout,
  quoted,
  renderNginxConfig,
  sammyDirectives,
  WORKER_CONNECTIONS,
  type NginxConfigInput,
} from '../src/config.js';
import { resolveNginxOptions, type NginxServerOptions } from '../src/options.js';

/** The lines of the block that starts with `head {` (its own lines, trimmed; nested blocks included). */
function blockOf(conf: string, head: string): string[] {
  const lines = conf.split('\n').map((l) => l.trim());
  const start = lines.indexOf(`${head} {`);
  if (start === -1) throw new Error(`no block ${head}`);
  let depth = 0;
  for (let i = start; i < lines.length; i++) {
    depth += (lines[i]!.endsWith('{') ? 1 : 0) - (lines[i] === '}' ? 1 : 0);
    if (depth === 0) return lines.slice(start + 1, i);
  }
  throw new Error(`block ${head} does not end`);
}

describe('nginx.conf', () => {
  let dir: string;
  let mediaDir: string;
  const render = (o: Partial<NginxServerOptions>, extra: Partial<NginxConfigInput> = {}): string =>
    renderNginxConfig({
      options: { ...resolveNginxOptions({ mediaDir, workers: 3, playerDir: '/srv/page' }), ...o },
      modulePath: '/cache/ngx_http_sammy_module.so',
      layout: nginxLayout('/tmp/sammy-nginx-1-x', null),
      user: null,
      openFilesLimit: 20_000,
      ...extra,
    });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sammy-nginx-config-'));
    mediaDir = join(dir, 'media');
    mkdirSync(mediaDir);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('the module, the workers, and every file nginx writes in the folder', () => {
    const conf = render({});
    const lines = conf.split('\n');
    expect(lines[1]).toBe('load_module "/cache/ngx_http_sammy_module.so";');
    expect(lines).toEqual(expect.arrayContaining([
      'worker_processes 3;',
      'worker_rlimit_nofile 20000;',
      'pid "/tmp/sammy-nginx-1-x/nginx.pid";',
      'error_log "/tmp/sammy-nginx-1-x/error.log" notice;',
    ]));
    expect(blockOf(conf, 'events')).toEqual([`worker_connections ${WORKER_CONNECTIONS};`]);
    expect(WORKER_CONNECTIONS).toBeGreaterThanOrEqual(10_000);
    const http = blockOf(conf, 'http');
    for (const temp of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) {
      expect(http).toContain(`${temp}_temp_path "/tmp/sammy-nginx-1-x/${temp}_temp";`);
    }
    expect(conf).not.toMatch(/^user /m);
    expect(render({}, { user: 'root' })).toMatch(/^user root;$/m);
  });

  test("the Node server's limits, sendfile, no access log, no version", () => {
    const http = blockOf(render({}), 'http');
    expect(http).toEqual(expect.arrayContaining([
      'sendfile on;',
      'tcp_nopush on;',
      'server_tokens off;',
      'access_log off;',
      `client_header_timeout ${DEFAULT_LIMITS.headersTimeoutMs}ms;`,
      `client_body_timeout ${DEFAULT_LIMITS.requestTimeoutMs}ms;`,
      `keepalive_timeout ${DEFAULT_LIMITS.keepAliveTimeoutMs}ms;`,
      `send_timeout ${DEFAULT_LIMITS.idleTimeoutMs}ms;`,
      'large_client_header_buffers 1 16384;',
    ]));
  });

  test("content types and cache headers as the Node server's", () => {
    const conf = render({});
    expect(blockOf(conf, 'types')).toEqual(expect.arrayContaining([
      'application/dash+xml mpd;',
      'application/vnd.apple.mpegurl m3u8;',
      'video/mp4 m4s;',
      'video/mp4 mp4;',
      'application/json json;',
      'text/html html;',
      'application/javascript js;',
      'text/css css;',
      'application/json map;',
      'image/svg+xml svg;',
      'image/vnd.microsoft.icon ico;',
    ]));
    expect(blockOf(conf, 'map $uri $sammy_cache_control')).toEqual([
      '~^/media/.*\\.m4s$ "public, max-age=3600";',
      '~^/media/.*\\.mp4$ "public, max-age=3600";',
      '~^/media/.*\\.m4a$ "public, max-age=3600";',
      'default "no-cache";',
    ]);
    expect(blockOf(conf, 'server')).toContain('add_header Cache-Control $sammy_cache_control;');
  });

  test('/media/: the folder, no links below it, and every sammy_* directive from the options', () => {
    const o = {
      pacing: false, spiralGuard: false, spiralGuardMultiplier: 3.5, minRateKbps: 200, maxRateKbps: 50_000, honourQueryCmcd: false, tailHold: false,
    };
    expect(blockOf(render(o), 'location /media/')).toEqual([
      `alias "${mediaDir}/";`,
      `disable_symlinks on "from=${mediaDir}";`,
      'sammy on;',
      'sammy_pacing off;',
      'sammy_min_rate_kbps 200;',
      'sammy_max_rate_kbps 50000;',
      'sammy_spiral_guard off;',
      'sammy_spiral_guard_multiplier 3.5;',
      'sammy_query_cmcd off;',
      `sammy_max_cmcd_bytes ${DEFAULT_LIMITS.maxCmcdBytes};`,
      'sammy_tail_hold off;',
      'sammy_telemetry_log "/tmp/sammy-nginx-1-x/telemetry.jsonl";',
    ]);
    // The defaults are written out too, never left to the module's own.
    expect(sammyDirectives(resolveNginxOptions({ mediaDir }), '/l')).toEqual([
      'sammy on;', 'sammy_pacing on;', 'sammy_min_rate_kbps 100;', 'sammy_max_rate_kbps 10000000;', 'sammy_spiral_guard on;',
      'sammy_spiral_guard_multiplier 2.5;', 'sammy_query_cmcd on;', 'sammy_max_cmcd_bytes 2048;', 'sammy_tail_hold on;',
      'sammy_telemetry_log "/l";',
    ]);
    const logged = render({ logFile: '/var/log/sammy.jsonl' }, { layout: nginxLayout('/tmp/sammy-nginx-1-x', '/var/log/sammy.jsonl') });
    expect(logged).toContain('sammy_telemetry_log "/var/log/sammy.jsonl";');
  });

  test('the other routes: GET and HEAD only, dotfiles, /healthz, /metrics, loopback-only stub_status, the page or a 503', () => {
    const server = blockOf(render({}), 'server');
    expect(server.join('\n')).toContain('if ($request_method !~ ^(?:GET|HEAD)$) {\nreturn 405;\n}');
    expect(server).toContain('add_header Allow $sammy_allow always;');
    expect(blockOf(render({}), 'location ~ /\\.')).toEqual(['return 403;']);
    const health = blockOf(render({}), 'location = /healthz');
    const body = /^return 200 '(.*)';$/.exec(health[1]!)![1]!;
    expect(JSON.parse(body.replace('$pid', '1'))).toEqual({
      status: 'ok', server: 'nginx', pacing: true, spiralGuard: true, spiralGuardMultiplier: 2.5, tailHold: true,
      tls: false, http2: false, workers: 3, pid: 1,
    });
    expect(blockOf(render({}), 'location = /metrics')).toEqual(['sammy_metrics;']);
    expect(blockOf(render({}), 'location = /nginx_status')).toEqual(['stub_status;', 'allow 127.0.0.1;', 'allow ::1;', 'deny all;']);
    const page = blockOf(render({}), 'location /');
    expect(page).toEqual(expect.arrayContaining(['root "/srv/page";', 'disable_symlinks on "from=/srv/page";']));
    expect(page).toContain('try_files /index.html @player_not_built;');
    expect(blockOf(render({}), 'location @player_not_built')[1]).toMatch(/^return 503 "The player page is not built\. Run `npm run build`/);
  });

  test('TLS, HTTP/2 and the listening address', () => {
    const tls = { certFile: '/etc/c.pem', keyFile: '/etc/k.pem' };
    const server = blockOf(render({ tls, http2: true, host: '::1', port: 8443 }), 'server');
    expect(server).toEqual(expect.arrayContaining([
      'listen [::1]:8443 ssl http2;',
      'ssl_certificate "/etc/c.pem";',
      'ssl_certificate_key "/etc/k.pem";',
      'ssl_protocols TLSv1.2 TLSv1.3;',
    ]));
    expect(blockOf(render({ tls }), 'server')[0]).toBe('listen 127.0.0.1:8080 ssl;');
    expect(blockOf(render({}), 'server')[0]).toBe('listen 127.0.0.1:8080;');
    expect(render({})).not.toContain('ssl_');
    expect(listenAddress('::', 80)).toBe('[::]:80 ipv6only=off');
    expect(listenAddress('0.0.0.0', 80)).toBe('0.0.0.0:80');
  });

  test("CORS only with --cors-origin: the preflight's headers for OPTIONS, Server-Timing exposed to the rest", () => {
    expect(render({})).not.toContain('Access-Control');
    const conf = render({ corsOrigin: 'http://app.example' });
    const server = blockOf(conf, 'server');
    expect(server).toEqual(expect.arrayContaining([
      'add_header Access-Control-Allow-Origin "http://app.example" always;',
      'add_header Vary Origin always;',
      'add_header Access-Control-Allow-Headers $sammy_cors_allow_headers always;',
      'add_header Access-Control-Expose-Headers $sammy_cors_expose_headers always;',
    ]));
    expect(server.join('\n')).toContain('if ($request_method = OPTIONS) {\nreturn 204;\n}');
    expect(server.join('\n')).toContain('if ($request_method !~ ^(?:GET|HEAD|OPTIONS)$) {');
    expect(blockOf(conf, 'map $request_method $sammy_cors_allow_headers')).toEqual([
      'OPTIONS "Range, CMCD-Object, CMCD-Request, CMCD-Session, CMCD-Status";',
      'default "";',
    ]);
    expect(blockOf(conf, 'map $request_method $sammy_cors_expose_headers')[1]).toMatch(/^default "Server-Timing, /);
    expect(render({ corsOrigin: '*' })).not.toContain('Vary Origin');
  });

  test('a path nginx.conf cannot hold is refused, not written', () => {
    expect(quoted('/tmp/a b;{}#')).toBe('"/tmp/a b;{}#"');
    for (const bad of ['/tmp/a"b', '/tmp/a\\b', '/tmp/$x', '/tmp/a\nb']) {
      expect(() => quoted(bad)).toThrow(/SAMMY_NGINX_FAILED|cannot write/);
    }
    const weird = nginxLayout('/tmp/we"ird', null);
    expect(() => render({}, { layout: weird })).toThrow(/cannot write "\/tmp\/we\\"ird\/nginx\.pid" into nginx\.conf/);
  });
});
