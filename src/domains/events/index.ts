/**
 * The events domain's face: what other folders may use of it. Everything else under
 * `src/domains/events/` is private to the domain.
 */
export { eventBody } from "./event-body.js";
export { apiEventType, emitEvent, type NewEvent } from "./store/outbox.js";
