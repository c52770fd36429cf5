import type { JsonValue } from "@bufbuild/protobuf";
import { Code, type ConnectError } from "@connectrpc/connect";
import { isV1 } from "../../aip/v1/version.js";
import { bearerChallenge } from "../http/credentials.js";
import type { NodeRequest, NodeResponse } from "../http/node-types.js";
import { httpStatusFromCode, writeJson, writeStatus, type StatusTarget } from "../http/status-json.js";
import type { UnaryAnswer } from "../rpc/call.js";
import { encodedOnce } from "../rpc/encoded-once.js";
import { responseHeaders } from "../rpc/headers.js";
import type { RestRoute } from "./http-rules.js";
import { messageJson } from "../../aip/message-json.js";

/** Writes a failed call's error as a Status, with its headers worth passing on; a 401 with a Bearer challenge. */
export function writeCallError(req: NodeRequest, res: NodeResponse, error: ConnectError, target: StatusTarget): void {
  const headers = responseHeaders(error.metadata, "rest");
  if (error.code === Code.Unauthenticated) headers["www-authenticate"] ??= bearerChallenge(target.domain, req.headers.authorization, error.rawMessage);
  writeStatus(res, httpStatusFromCode(error.code), error, target, headers);
}

/** Writes a successful answer: its headers worth passing on and the message as proto JSON (an Empty as no body). */
export function writeAnswer(res: NodeResponse, route: RestRoute, answer: UnaryAnswer, target: StatusTarget): void {
  if (res.destroyed) return;
  const headers = responseHeaders(answer.header, "rest");
  Object.assign(headers, responseHeaders(answer.trailer, "rest"));
  const output = route.method.output;
  if (output.typeName === "google.protobuf.Empty") {
    headers["content-length"] = "0";
    res.writeHead(200, headers);
    res.end();
    return;
  }
  const protoFieldNames = isV1(route.method.parent);
  const body = encodedOnce(answer.message, `rest json ${protoFieldNames} ${route.responseField?.name ?? ""}`, () => {
    let json = messageJson(output, answer.message, { registry: target.registry, protoFieldNames });
    if (route.responseField) json = (json as Record<string, JsonValue>)[protoFieldNames ? route.responseField.name : route.responseField.jsonName] ?? null;
    return JSON.stringify(json);
  });
  writeJson(res, 200, body, headers);
}
