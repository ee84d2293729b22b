// The bench's HTTPS and HTTP/2 comparisons (bench/tls.ts), taken from its rows by name,
// and its report: the table server/results/README.md shows, rendered again from the
// committed runs.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tlsRatios, tlsReport, type TlsRow, type TlsRowId, type TlsSection } from '../bench/tls.js';

const row = (id: TlsRowId, cpuSPerGB: number): TlsRow => ({ id, config: id, bytes: 1e9, elapsedS: 1, cpuS: cpuSPerGB, cpuSPerGB, protocol: null, cipher: null });

test('Sammy over nginx both over TLS, and each server\'s TLS over plain, whatever the order', () => {
  const rows = [row('nginx', 0.5), row('pacedDefaultTls', 9), row('unpacedTls', 4), row('nginxTls', 1), row('unpaced', 2), row('pacedKernelTls', 6)];
  expect(tlsRatios(rows)).toEqual({ sammyTlsOverPlain: 2, unpacedVsNginx: 4, pacedKernelVsNginx: 6, pacedDefaultVsNginx: 9, nginxTlsOverPlain: 2 });
});

test('without nginx only the TLS cost of Sammy; a missing row is named', () => {
  expect(tlsRatios([row('unpacedTls', 3), row('unpaced', 2)])).toEqual({ sammyTlsOverPlain: 1.5 });
  expect(() => tlsRatios([row('unpacedTls', 3)])).toThrow(/no row 'unpaced'/);
});

test('HTTP/2: Sammy over nginx both over HTTP/2, and each server over HTTP/2 / over HTTP/1.1 with TLS (paced: kernel trains both)', () => {
  const rows = [row('nginxTls', 1), row('unpacedTls', 4), row('pacedKernelTls', 6), row('pacedDefaultTls', 9), row('unpaced', 2), row('nginxH2', 0.5), row('unpacedH2', 2), row('pacedH2', 3)];
  expect(tlsRatios(rows)).toMatchObject({ unpacedH2VsNginxH2: 4, pacedH2VsNginxH2: 6, sammyUnpacedH2OverTls: 0.5, sammyPacedH2OverTls: 0.5, nginxH2OverTls: 0.5 });
  const withoutNginx = tlsRatios([row('unpacedTls', 4), row('pacedKernelTls', 6), row('unpaced', 2), row('unpacedH2', 2), row('pacedH2', 3)]);
  expect(withoutNginx).toEqual({ sammyTlsOverPlain: 2, sammyUnpacedH2OverTls: 0.5, sammyPacedH2OverTls: 0.5 });
  expect(() => tlsRatios([row('unpacedTls', 4), row('unpaced', 2), row('unpacedH2', 2)])).toThrow(/no row 'pacedH2'/);
});

test('the report gives each run\'s figure in a cell, a value every run shares once, and only the ratios some run has', () => {
  const section = (perGB: number): TlsSection => {
    const rows = [row('unpacedTls', perGB), row('unpaced', 1)];
    return { load: { files: 1, fileBytes: 1, connections: 1, paceBytesPerS: 1, h2Connections: 1, h2StreamsPerConnection: 1 }, rows, ratios: tlsRatios(rows) };
  };
  const lines = tlsReport([section(2), section(3)]);
  expect(lines).toContain('| unpacedTls | - | 1.000 | 1.0 | 2.00, 3.00 | - | - | - | - | - |');
  expect(lines).toContain('- What TLS costs, CPU per GB over HTTPS / over HTTP: sammy 2.00x, 3.00x');
  expect(lines.join('\n')).not.toMatch(/HTTP\/2/);
});
test('server/results/README.md holds the HTTP/2 table as the committed runs render it (npm run bench -w @sammy/server -- --render FILE,...)', () => {
  const results = join(dirname(fileURLToPath(import.meta.url)), '..', 'results');
  const runs = ['bench-h2-1.json', 'bench-h2-2.json', 'bench-h2-3.json', 'bench-h2-4.json', 'bench-h2-5.json'].map((file) => (JSON.parse(readFileSync(join(results, file), 'utf8')) as { tls: TlsSection }).tls);
  const readme = readFileSync(join(results, 'README.md'), 'utf8');
  for (const line of tlsReport(runs)) expect(readme).toContain(line);
});
