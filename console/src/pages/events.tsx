import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { useEffect, useState } from "preact/hooks";
import type { Subscription } from "../../../gen/platform/events/v2/subscription_pb.js";
import { api } from "../api.js";
import { columns, Table } from "../table.js";

const when = (t: Timestamp | undefined) => (t ? timestampDate(t).toLocaleString() : "never");

/** The subscriptions at a group and below, and how their deliveries stand. */
export function EventsPage({ uid, onError }: { uid: string; onError: (error: unknown) => void }) {
  const [subscriptions, setSubscriptions] = useState<Subscription[]>([]);
  useEffect(() => {
    api.subscriptions.listSubscriptions({ uidp: { descendantsOf: uid }, pageSize: 200 }).then((r) => setSubscriptions(r.subscriptions), onError);
  }, [uid]);
  return (
    <section aria-labelledby="events">
      <nav aria-label="Breadcrumbs" class="crumbs">
        <a href={`#/groups/${uid}`}>Back to the group</a>
      </nav>
      <h1 id="events">Event subscriptions</h1>
      <Table
        caption={`${subscriptions.length} subscriptions and their deliveries`}
        rows={subscriptions}
        rowKey={(s) => s.uid}
        empty="No subscriptions here."
        columns={columns<Subscription>(
          ["Sink", (s) => s.sink],
          ["Pending", (s) => String(s.delivery?.pendingCount ?? 0n)],
          ["Failed", (s) => String(s.delivery?.failedCount ?? 0n)],
          ["Last success", (s) => when(s.delivery?.lastSuccessTime)],
          [
            "Last failure",
            (s) => `${when(s.delivery?.lastFailureTime)}${s.delivery?.lastFailureMessage ? `: ${s.delivery.lastFailureStatus ? `HTTP ${s.delivery.lastFailureStatus}, ` : ""}${s.delivery.lastFailureMessage}` : ""}`,
          ],
        )}
      />
    </section>
  );
}
