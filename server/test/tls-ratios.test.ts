// The bench's HTTPS comparisons (bench/tls.ts), taken from its rows by name.
import { tlsRatios, type TlsRow, type TlsRowId } from '../bench/tls.js';

const row = (id: TlsRowId, cpuSPerGB: number): TlsRow => ({ id, config: id, bytes: 1e9, elapsedS: 1, cpuS: cpuSPerGB, cpuSPerGB, protocol: null, cipher: null });

test('Sammy over nginx both over TLS, and each server\'s TLS over plain, whatever the order', () => {
  const rows = [row('nginx', 0.5), row('pacedDefaultTls', 9), row('unpacedTls', 4), row('nginxTls', 1), row('unpaced', 2), row('pacedKernelTls', 6)];
  expect(tlsRatios(rows)).toEqual({ sammyTlsOverPlain: 2, unpacedVsNginx: 4, pacedKernelVsNginx: 6, pacedDefaultVsNginx: 9, nginxTlsOverPlain: 2 });
});

test('without nginx only the TLS cost of Sammy; a missing row is named', () => {
  expect(tlsRatios([row('unpacedTls', 3), row('unpaced', 2)])).toEqual({ sammyTlsOverPlain: 1.5 });
  expect(() => tlsRatios([row('unpacedTls', 3)])).toThrow(/no row 'unpaced'/);
});
