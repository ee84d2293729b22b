/**
 * Every arm plays to the same buffer target, so arms are compared at the same
 * target: Sammy's `maxBufferS`, and for dash.js's ABR its three buffer times, which
 * dash.js picks between by rung and content length
 * (ScheduleController._getGenericBufferTarget). The browser settings
 * (`src/dashjs/settings.ts`) and the simulator's dash.js model both take them from here.
 */
export interface DashjsBufferTimesS {
  bufferTimeDefault: number;
  bufferTimeAtTopQuality: number;
  bufferTimeAtTopQualityLongForm: number;
}

export function dashjsBufferTimesS(maxBufferS: number): DashjsBufferTimesS {
  return { bufferTimeDefault: maxBufferS, bufferTimeAtTopQuality: maxBufferS, bufferTimeAtTopQualityLongForm: maxBufferS };
}
