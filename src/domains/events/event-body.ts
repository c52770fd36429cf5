import { getOption, type DescMessage, type JsonObject, type Message } from "@bufbuild/protobuf";
import { messageJson } from "../../aip/message-json.js";
import { field_behavior, FieldBehavior } from "../../../gen/google/api/field_behavior_pb.js";
import { secret } from "../../../gen/platform/common/v1/events_pb.js";

/**
 * The body of an event about a proto message: the message as every answer writes it
 * (`messageJson`: JSON names, zero values written, timestamps with milliseconds) without the fields no event carries,
 * at any depth: those marked `(platform.common.v1.secret)` (an invite's code, a client secret)
 * and INPUT_ONLY ones (what a caller sends but a Get never shows).
 */
export function eventBody(desc: DescMessage, message: Message): JsonObject {
  return withoutHidden(desc, messageJson(desc, message) as JsonObject);
}

/** Whether a field is left out of event bodies. */
export function hiddenFromEvents(field: DescMessage["fields"][number]): boolean {
  return getOption(field, secret) || getOption(field, field_behavior).includes(FieldBehavior.INPUT_ONLY);
}

function withoutHidden(desc: DescMessage, json: JsonObject): JsonObject {
  for (const field of desc.fields) {
    const value = json[field.jsonName];
    if (value === undefined) continue;
    if (hiddenFromEvents(field)) {
      delete json[field.jsonName];
    } else if (field.message && value && typeof value === "object") {
      const items = field.fieldKind === "list" ? (value as JsonObject[]) : field.fieldKind === "message" ? [value as JsonObject] : [];
      for (const item of items) if (item && typeof item === "object") withoutHidden(field.message, item);
    }
  }
  return json;
}
