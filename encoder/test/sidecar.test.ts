import { parseSegmentsSidecar, SidecarError } from '../src/sidecar.js';

const rep = (id: string, bitrateKbps: number, sizes: number[]) => ({
  id,
  bitrateKbps,
  width: 640,
  height: 360,
  segmentSizesBytes: sizes,
  ssim: sizes.map(() => 0.9),
});

describe('parseSegmentsSidecar', () => {
  test('accepts a well-formed sidecar and fills meanSsim', () => {
    const parsed = parseSegmentsSidecar({ segmentDurationS: 2, representations: [rep('0', 100, [10, 20]), rep('1', 200, [30, 40])] });
    expect(parsed.representations[1]!.meanSsim).toBeCloseTo(0.9);
    expect(parsed.representations.map((r) => r.segmentSizesBytes)).toEqual([[10, 20], [30, 40]]);
  });

  test.each([
    ['no duration', { representations: [rep('0', 100, [1])] }, /segmentDurationS/],
    ['empty list', { segmentDurationS: 2, representations: [] }, /non-empty array/],
    ['fractional size', { segmentDurationS: 2, representations: [rep('0', 100, [1.5])] }, /segmentSizesBytes\[0\]/],
    ['unequal counts', { segmentDurationS: 2, representations: [rep('0', 100, [1, 2]), rep('1', 200, [1])] }, /has 1 segments/],
    ['unsorted', { segmentDurationS: 2, representations: [rep('0', 200, [1]), rep('1', 100, [1])] }, /strictly increasing/],
    ['ssim length', { segmentDurationS: 2, representations: [{ ...rep('0', 100, [1, 2]), ssim: [0.9] }] }, /ssim must be an array of 2/],
  ])('rejects %s', (_name, json, message) => {
    expect(() => parseSegmentsSidecar(json)).toThrow(SidecarError);
    expect(() => parseSegmentsSidecar(json)).toThrow(message);
  });
});
