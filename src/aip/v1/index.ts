/**
 * What every v1 service shares (docs/decisions.md, "v1"): a v1 service is a thin mapping over
 * the v2 service of the same resources, so it has no repository, validation or authorization
 * of its own. Its handlers map the v1 request onto a v2 request, call the v2 handler with the
 * same context, and map the answer back.
 */
export { listAll, listAllOf, V1_LIST_MAX, type V1Filter, type V2Page } from "./list.js";
export { blockedDelete, deleteV1 } from "./delete.js";
export { callV2, v1Field, type FieldRenames, type V2Handler } from "./call.js";
export { replaceAll } from "./update.js";
export { isV1, isV1Name, restKeyOf } from "./version.js";
