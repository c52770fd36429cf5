#!/usr/bin/env bash
# A buf curl session against a running server: no schema file, server reflection supplies it.
#
#   API=http://localhost:8080 TOKEN=<token> ORG=<organization uid> examples/buf-curl/session.sh
#
# buf comes from the npm package @bufbuild/buf (`npx buf`); BUF overrides it.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUF=${BUF:-npx buf}
API=${API:-http://localhost:8080}
: "${TOKEN:?set TOKEN (see platform-api bootstrap)}" "${ORG:?set ORG}"
curl() { $BUF curl --http2-prior-knowledge --protocol grpc "$@"; }

echo "# the services, from server reflection"
curl --list-services "$API"

echo "# Ping needs no token"
curl "$API/platform.ping.v2.PingService/Ping"

echo "# the organization"
curl -H "Authorization: Bearer $TOKEN" -d "{\"uid\": \"$ORG\"}" "$API/platform.iam.v2.GroupsService/GetGroup"

echo "# its folders"
curl -H "Authorization: Bearer $TOKEN" -d "{\"uidp\": {\"childrenOf\": \"$ORG\"}, \"pageSize\": 10}" "$API/platform.iam.v2.GroupsService/ListGroups"

echo "# a failed call: buf curl prints the google.rpc.Status, each detail as base64"
status=0
error=$(curl -H "Authorization: Bearer $TOKEN" -d "{\"uid\": \"$ORG/0123456789abcdef\"}" "$API/platform.iam.v2.GroupsService/GetGroup" 2>&1) || status=$?
echo "$error"
echo "# exit status $status (buf curl: gRPC code x 8)"

# buf curl 1.75 decodes a detail only if its type is compiled into buf itself, whatever the
# server's reflection or --schema offer; buf convert decodes each one with the schema the server's
# reflection answers for the detail's type (its file and the files it imports).
echo "# the details, decoded by buf convert with the schema from server reflection"
schema=$(mktemp -d)
trap 'rm -rf "$schema"' EXIT
node -e 'for (const d of JSON.parse(process.argv[1]).details ?? []) console.log(d.type, d.value)' "$error" |
  while read -r type value; do
    printf '%s ' "$type"
    # The files reflection answers, as a FileDescriptorSet (field 1, repeated FileDescriptorProto).
    curl -d "{\"fileContainingSymbol\": \"$type\"}" "$API/grpc.reflection.v1.ServerReflection/ServerReflectionInfo" |
      node -e 'let s = ""; process.stdin.on("data", (c) => (s += c)).on("end", () => {
        const set = JSON.parse(s).fileDescriptorResponse.fileDescriptorProto.flatMap((b64) => {
          const file = Buffer.from(b64, "base64"), length = [];
          for (let n = file.length; ; n >>>= 7) { if (n < 128) { length.push(n); break; } length.push((n & 127) | 128); }
          return [Buffer.from([10, ...length]), file];
        });
        process.stdout.write(Buffer.concat(set));
      })' >"$schema/set.binpb"
    # Go's encoding omits base64 padding; restore it before decoding.
    printf '%s' "$value$(printf '%*s' $(( (4 - ${#value} % 4) % 4 )) '' | tr ' ' '=')" | base64 -d |
      $BUF convert "$schema/set.binpb" --type "$type" --from -#format=binpb --to -#format=json
    echo
  done
