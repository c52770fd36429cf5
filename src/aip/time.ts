import { timestampFromMs } from "@bufbuild/protobuf/wkt";

/** Store times (epoch ms) to protobuf Timestamps. */
export const toTimestamp = (ms: number) => timestampFromMs(ms);
