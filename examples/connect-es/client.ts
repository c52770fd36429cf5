// A Connect-ES client on the code `npm run generate` makes from proto/ (protoc-gen-es, in gen/):
// reads the caller's organization, lists its folders, and shows a failed call's error details.
//
//   API_URL=http://localhost:8080 TOKEN=<token> ORG=<organization uid> node --import tsx examples/connect-es/client.ts
//
// The transport speaks the Connect protocol over HTTP/2; createGrpcTransport would speak gRPC
// to the same URL, and createGrpcWebTransport gRPC-Web.
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { ErrorInfoSchema, ResourceInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";

const { API_URL = "http://localhost:8080", TOKEN, ORG } = process.env;
if (!TOKEN || !ORG) throw new Error("set TOKEN and ORG (see `platform-api bootstrap`)");

const transport = createConnectTransport({ baseUrl: API_URL, httpVersion: "2" });
const groups = createClient(GroupsService, transport);
const headers = { authorization: `Bearer ${TOKEN}` };

const org = await groups.getGroup({ uid: ORG }, { headers });
console.log(JSON.stringify({ organization: { uid: org.uid, name: org.name, created: org.createTime?.seconds.toString() } }));

const page = await groups.listGroups({ uidp: { childrenOf: ORG }, pageSize: 10 }, { headers });
console.log(JSON.stringify({ folders: page.groups.map((g) => g.name), totalCount: page.totalCount?.toString() }));

try {
  await groups.getGroup({ uid: `${ORG}/0123456789abcdef` }, { headers });
} catch (error) {
  const e = ConnectError.from(error);
  const [info] = e.findDetails(ErrorInfoSchema);
  const [resource] = e.findDetails(ResourceInfoSchema);
  console.log(JSON.stringify({ code: Code[e.code], reason: info?.reason, domain: info?.domain, resource: resource?.resourceName }));
}
