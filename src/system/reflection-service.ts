import { create, type DescFile } from "@bufbuild/protobuf";
import { Code, type ConnectRouter } from "@connectrpc/connect";
import { file_google_rpc_error_details } from "../../gen/google/rpc/error_details_pb.js";
import { file_google_rpc_status } from "../../gen/google/rpc/status_pb.js";
import { file_grpc_health_v1_health } from "../../gen/grpc/health/v1/health_pb.js";
import * as v1 from "../../gen/grpc/reflection/v1/reflection_pb.js";
import * as v1alpha from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { buildDescriptorIndex, type DescriptorIndex } from "./descriptor-index.js";

type ReflectionQuery =
  | v1.ServerReflectionRequest["messageRequest"]
  | v1alpha.ServerReflectionRequest["messageRequest"];

/** The `message_response` oneof, identical in v1 and v1alpha. */
type ReflectionAnswer =
  | { case: "fileDescriptorResponse"; value: { fileDescriptorProto: Uint8Array[] } }
  | { case: "allExtensionNumbersResponse"; value: { baseTypeName: string; extensionNumber: number[] } }
  | { case: "listServicesResponse"; value: { service: { name: string }[] } }
  | { case: "errorResponse"; value: { errorCode: number; errorMessage: string } };

/**
 * Serves gRPC server reflection, both `grpc.reflection.v1.ServerReflection` and
 * `grpc.reflection.v1alpha.ServerReflection`, for `files` and everything they import.
 * `list_services` names the services of `files` plus the reflection and health services.
 * `google/rpc/status.proto` and `google/rpc/error_details.proto` are served too (no service
 * of theirs is listed): clients such as `buf curl` resolve error details (ErrorInfo, BadRequest,
 * ...) by their type name and print them as JSON instead of base64.
 * A file answer holds the requested file first, then all its transitive imports.
 * Unknown files, symbols or extensions get an `error_response` with NOT_FOUND; the stream
 * stays open.
 */
export function registerReflection(router: ConnectRouter, files: DescFile[]): void {
  const index = buildDescriptorIndex([
    ...files,
    v1.file_grpc_reflection_v1_reflection,
    v1alpha.file_grpc_reflection_v1alpha_reflection,
    file_grpc_health_v1_health,
    file_google_rpc_status,
    file_google_rpc_error_details,
  ]);
  // v1alpha is v1 under another package name: one implementation answers both.
  for (const version of [v1, v1alpha] as unknown as [typeof v1]) {
    router.service(version.ServerReflection, {
      async *serverReflectionInfo(requests) {
        for await (const request of requests) {
          yield create(version.ServerReflectionResponseSchema, {
            validHost: request.host,
            originalRequest: request,
            messageResponse: answer(index, request.messageRequest),
          });
        }
      },
    });
  }
}

function answer(index: DescriptorIndex, query: ReflectionQuery): ReflectionAnswer {
  switch (query.case) {
    case "listServices":
      return {
        case: "listServicesResponse",
        value: { service: index.services.map((name) => ({ name })) },
      };
    case "fileByFilename":
      return fileAnswer(index, query.value, `file ${query.value}`);
    case "fileContainingSymbol":
      return fileAnswer(index, index.fileOfSymbol(query.value), `symbol ${query.value}`);
    case "fileContainingExtension": {
      const { containingType, extensionNumber } = query.value;
      return fileAnswer(
        index,
        index.fileOfExtension(containingType, extensionNumber),
        `extension ${extensionNumber} of ${containingType}`,
      );
    }
    case "allExtensionNumbersOfType": {
      const numbers = index.extensionNumbers(query.value);
      if (!numbers) return notFound(`type ${query.value}`);
      return {
        case: "allExtensionNumbersResponse",
        value: { baseTypeName: query.value, extensionNumber: [...numbers] },
      };
    }
    default:
      return {
        case: "errorResponse",
        value: { errorCode: Code.InvalidArgument, errorMessage: "no message_request set" },
      };
  }
}

function fileAnswer(index: DescriptorIndex, fileName: string | undefined, what: string): ReflectionAnswer {
  const protos = fileName === undefined ? undefined : index.fileWithDeps(fileName);
  if (!protos) return notFound(what);
  return { case: "fileDescriptorResponse", value: { fileDescriptorProto: [...protos] } };
}

function notFound(what: string): ReflectionAnswer {
  return { case: "errorResponse", value: { errorCode: Code.NotFound, errorMessage: `${what} not found` } };
}
