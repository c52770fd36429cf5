// A @grpc/grpc-js client with google-protobuf messages, on stubs regenerated from proto/ by
// protoc-gen-ts (`npm run generate:examples` writes them to examples/grpc-js/gen/):
// reads the caller's organization, lists its folders, and decodes a failed call's
// grpc-status-details-bin (a google.rpc.Status) into its ErrorInfo.
//
//   API=localhost:8080 TOKEN=<token> ORG=<organization uid> node --import tsx examples/grpc-js/client.ts
import * as grpc from "@grpc/grpc-js";
import { google as rpc } from "./gen/google/rpc/error_details";
import { google as status } from "./gen/google/rpc/status";
import { platform as uidp } from "./gen/platform/common/v1/uidp";
import { platform } from "./gen/platform/iam/v2/groups_service";

const { API = "localhost:8080", TOKEN, ORG } = process.env;
if (!TOKEN || !ORG) throw new Error("set TOKEN and ORG (see `platform-api bootstrap`)");

const client = new platform.iam.v2.GroupsServiceClient(API, grpc.credentials.createInsecure());
const metadata = new grpc.Metadata();
metadata.set("authorization", `Bearer ${TOKEN}`);

function call<Req, Res>(method: (req: Req, md: grpc.Metadata, cb: (e: grpc.ServiceError | null, r?: Res) => void) => unknown, request: Req): Promise<Res> {
  return new Promise((resolve, reject) => method.call(client, request, metadata, (error, response) => (error ? reject(error) : resolve(response!))));
}

const org = await call(client.GetGroup, new platform.iam.v2.GetGroupRequest({ uid: ORG }));
console.log(JSON.stringify({ organization: { uid: org.uid, name: org.name } }));

const page = await call(client.ListGroups, new platform.iam.v2.ListGroupsRequest({ uidp: new uidp.common.v1.UidpFilter({ children_of: ORG }), page_size: 10 }));
console.log(JSON.stringify({ folders: page.groups.map((g) => g.name), totalCount: page.total_count }));

try {
  await call(client.GetGroup, new platform.iam.v2.GetGroupRequest({ uid: `${ORG}/0123456789abcdef` }));
} catch (error) {
  const e = error as grpc.ServiceError;
  const bytes = e.metadata.get("grpc-status-details-bin")[0] as Buffer;
  const details = status.rpc.Status.deserializeBinary(bytes).details;
  const info = details.find((any) => any.type_url.endsWith("/google.rpc.ErrorInfo"));
  const reason = info ? rpc.rpc.ErrorInfo.deserializeBinary(info.value).reason : undefined;
  console.log(JSON.stringify({ code: grpc.status[e.code], reason, detailTypes: details.map((d) => d.type_url.split("/").pop()) }));
}
client.close();
