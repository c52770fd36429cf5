import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { useEffect, useState } from "preact/hooks";
import type { Subscription } from "../../../gen/platform/events/v2/subscription_pb.js";
import { api } from "../api.js";

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
      <table>
        <caption>{subscriptions.length} subscriptions and their deliveries</caption>
        <thead>
          <tr>
            <th scope="col">Sink</th>
            <th scope="col">Pending</th>
            <th scope="col">Failed</th>
            <th scope="col">Last success</th>
            <th scope="col">Last failure</th>
          </tr>
        </thead>
        <tbody>
          {subscriptions.map((s) => (
            <tr key={s.uid}>
              <td>{s.sink}</td>
              <td>{String(s.delivery?.pendingCount ?? 0n)}</td>
              <td>{String(s.delivery?.failedCount ?? 0n)}</td>
              <td>{when(s.delivery?.lastSuccessTime)}</td>
              <td>
                {when(s.delivery?.lastFailureTime)}
                {s.delivery?.lastFailureMessage ? `: ${s.delivery.lastFailureStatus ? `HTTP ${s.delivery.lastFailureStatus}, ` : ""}${s.delivery.lastFailureMessage}` : ""}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
