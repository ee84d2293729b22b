/**
 * No Docker engine runs on these machines, so the compose file and Dockerfile are
 * checked statically: they parse, and every file they name exists in the repository.
 * The repository's documents point only at files it holds.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, { build: { context: string; dockerfile: string; target: string }; ports: string[]; volumes: string[]; profiles?: string[]; command?: string[] }>;
  volumes: Record<string, unknown>;
};

describe('docker-compose.yml', () => {
  const service = compose.services.sammy!;

  test('parses and builds the repository Dockerfile on port 8080', () => {
    expect(existsSync(join(root, service.build.context, service.build.dockerfile))).toBe(true);
    expect(service.ports).toContain('8080:8080');
  });

  test('the media volume it mounts is declared', () => {
    const [name] = service.volumes[0]!.split(':');
    expect(Object.keys(compose.volumes)).toContain(name);
  });
});

describe('docker compose --profile edge', () => {
  const { origin, edge } = compose.services;
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
  const stage = (name: string): string => dockerfile.split(/^FROM /m).find((part) => part.includes(` AS ${name}\n`)) ?? '';

  test('an origin with --pacing off and an edge in front of it, only in the edge profile', () => {
    expect(origin!.profiles).toEqual(['edge']);
    expect(edge!.profiles).toEqual(['edge']);
    expect(origin!.build.target).toBe('server');
    expect(origin!.command!.join(' ')).toContain('--pacing off');
    expect(edge!.ports).toContain('8081:8081');
    expect(Object.keys(compose.volumes)).toContain(origin!.volumes[0]!.split(':')[0]);
  });

  test("the edge image installs Traffic Server and its plugin headers and starts like npm run edge, in front of the origin", () => {
    expect(edge!.build.target).toBe('edge');
    expect(stage('edge')).toMatch(/apt-get install[^\n]*\btrafficserver trafficserver-dev\b/);
    const cmd = JSON.parse(`[${/^CMD \[(.*)\]$/m.exec(stage('edge'))![1]!}]`) as string[];
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.edge).toContain(cmd[1]);
    expect(cmd.join(' ')).toContain('--origin http://origin:8080');
  });
});

describe('docker compose --profile nginx', () => {
  const { nginx } = compose.services;
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
  const nginxStage = dockerfile.split(/^FROM /m).find((part) => part.startsWith('base AS nginx\n')) ?? '';

  test('nginx with the Sammy module on port 8082, its own ladder, started like npm start -- --server nginx', () => {
    expect(nginx!.profiles).toEqual(['nginx']);
    expect(nginx!.build.target).toBe('nginx');
    expect(nginx!.ports).toContain('8082:8082');
    expect(Object.keys(compose.volumes)).toContain(nginx!.volumes[0]!.split(':')[0]);
    expect(nginx!.command!.join(' ')).toBe('node scripts/start.mjs --server nginx --host 0.0.0.0 --port 8082 --media /app/media');
    expect(readFileSync(join(root, 'scripts', 'start.mjs'), 'utf8')).toContain("'nginx.mjs'");
  });

  test('its image installs nginx, its source tree and a compiler, builds the page and the module, and starts the same way', () => {
    expect(nginxStage).toMatch(/apt-get install[^\n]*\bffmpeg nginx-core nginx-dev gcc libc6-dev make\b/);
    expect(nginxStage).toMatch(/^RUN npm run build$/m);
    expect(nginxStage).toContain('buildNginxModule()');
    const cmd = JSON.parse(`[${/^CMD \[(.*)\]$/m.exec(nginxStage)![1]!}]`) as string[];
    expect(cmd).toEqual(nginx!.command);
  });
});

describe('Dockerfile', () => {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');

  test('builds on node:20-bookworm-slim with Debian ffmpeg', () => {
    expect(dockerfile).toMatch(/^FROM node:20-bookworm-slim AS base$/m);
    expect(dockerfile).toMatch(/apt-get install[^\n]*\bffmpeg\b/);
  });

  test('every file it copies exists', () => {
    const copies = [...dockerfile.matchAll(/^COPY (.+) \S+$/gm)].flatMap((m) => m[1]!.split(/\s+/)).filter((p) => p !== '.');
    expect(copies.length).toBeGreaterThan(3);
    for (const path of copies) expect(existsSync(join(root, path))).toBe(true);
  });

  test('starts with the same script as npm start', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    // The default image is the last stage.
    const cmd = [...dockerfile.matchAll(/^CMD \[(.*)\]$/gm)].at(-1)![1]!;
    const script = JSON.parse(`[${cmd}]`)[1] as string;
    expect(pkg.scripts.start).toContain(script);
    expect(existsSync(join(root, script))).toBe(true);
  });
});

describe('.ci/run', () => {
  test('installs the system packages and runs the README test command', () => {
    const ci = readFileSync(join(root, '.ci', 'run'), 'utf8');
    for (const pkg of ['ffmpeg', 'chromium', 'iproute2', 'tcpdump', 'iputils-ping']) expect(ci).toContain(pkg);
    expect(ci).toMatch(/^npm ci/m);
    expect(ci).toMatch(/^npm test$/m);
  });
});

describe('the repository stands on its own', () => {
  const tracked = (pattern: string) => execFileSync('git', ['ls-files', '-z', pattern], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);

  test('no file points to a document the repository does not hold', () => {
    const outside = /\b(?:DESIGN|FACTS|STYLE|HELPERS)\.md\b|\.\.\/shared\//;
    const hits = tracked('*').filter((path) => path !== 'package-lock.json' && existsSync(join(root, path)) && outside.test(readFileSync(join(root, path), 'utf8')));
    expect(hits).toEqual([]);
  });

  test('every relative link in the markdown files leads to a file that exists', () => {
    const broken: string[] = [];
    for (const path of tracked('*.md')) {
      const text = readFileSync(join(root, path), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        if (!existsSync(join(root, dirname(path), target!))) broken.push(`${path}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  test('every workspace has a README of at most 400 lines: a reference, with run narratives beside their results', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { workspaces: string[] };
    const over: string[] = [];
    for (const workspace of pkg.workspaces) {
      const path = `${workspace}/README.md`;
      expect(existsSync(join(root, path))).toBe(true);
      const lines = readFileSync(join(root, path), 'utf8').split('\n').length - 1;
      if (lines > 400) over.push(`${path}: ${lines} lines`);
    }
    expect(over).toEqual([]);
  });
});
