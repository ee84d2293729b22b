// What the burst plan needs to know about the server's network namespace: the TSO
// sysctls (per namespace) and each device's GSO limits (per device). Read once, and
// again when a connection arrives on an address not seen before.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { DEFAULT_DEVICE_GSO, DEFAULT_KERNEL_TSO, type DeviceGso, type KernelTsoSettings } from './burst.js';

function readSysctl(name: string): string | null {
  try {
    return readFileSync(`/proc/sys/net/ipv4/${name}`, 'utf8').trim();
  } catch {
    return null;
  }
}

function integerOr(text: string | null, fallback: number): number {
  const value = text === null ? NaN : Number(text);
  return Number.isInteger(value) ? value : fallback;
}

export function readKernelTsoSettings(): KernelTsoSettings {
  return {
    minTsoSegs: integerOr(readSysctl('tcp_min_tso_segs'), DEFAULT_KERNEL_TSO.minTsoSegs),
    tsoRttLog: integerOr(readSysctl('tcp_tso_rtt_log'), DEFAULT_KERNEL_TSO.tsoRttLog),
    congestionControl: readSysctl('tcp_congestion_control') ?? DEFAULT_KERNEL_TSO.congestionControl,
  };
}

/** gso_max_size/gso_max_segs are not in sysfs; iproute2's JSON output has them. */
function readDeviceGso(): Map<string, DeviceGso> {
  const devices = new Map<string, DeviceGso>();
  try {
    const out = execFileSync('ip', ['-j', '-d', 'link', 'show'], { encoding: 'utf8', timeout: 2000, stdio: ['ignore', 'pipe', 'ignore'] });
    for (const link of JSON.parse(out) as Array<{ ifname?: string; gso_max_size?: number; gso_max_segs?: number }>) {
      if (typeof link.ifname !== 'string') continue;
      devices.set(link.ifname, {
        gsoMaxSize: link.gso_max_size ?? DEFAULT_DEVICE_GSO.gsoMaxSize,
        gsoMaxSegs: link.gso_max_segs ?? DEFAULT_DEVICE_GSO.gsoMaxSegs,
      });
    }
  } catch {
    // no iproute2: assume the kernel defaults
  }
  return devices;
}

const REFRESH_MIN_INTERVAL_MS = 5000;

/** GSO limits of the device that owns a connection's local address. */
export class DeviceGsoTable {
  #byAddress = new Map<string, DeviceGso>();
  #loadedAtMs = -Infinity;

  constructor() {
    this.#load();
  }

  forLocalAddress(address: string | undefined): DeviceGso {
    if (address === undefined) return DEFAULT_DEVICE_GSO;
    const plain = address.startsWith('::ffff:') ? address.slice(7) : address;
    let found = this.#byAddress.get(plain);
    if (found === undefined && performance.now() - this.#loadedAtMs > REFRESH_MIN_INTERVAL_MS) {
      this.#load();
      found = this.#byAddress.get(plain);
    }
    return found ?? DEFAULT_DEVICE_GSO;
  }

  #load(): void {
    this.#loadedAtMs = performance.now();
    const devices = readDeviceGso();
    this.#byAddress.clear();
    for (const [name, addresses] of Object.entries(networkInterfaces())) {
      for (const a of addresses ?? []) this.#byAddress.set(a.address, devices.get(name) ?? DEFAULT_DEVICE_GSO);
    }
  }
}
