import { useState } from "preact/hooks";

/**
 * A page's changes: `act(work)` makes an event handler that runs `work` (a call of the API), then
 * bumps `version` so the page's reads run again (as `reload` does); a refusal goes to `onError`,
 * which shows it.
 */
export function useChanges(onError: (error: unknown) => void) {
  const [version, setVersion] = useState(0);
  const reload = () => setVersion((v) => v + 1);
  const act =
    (work: () => Promise<unknown>, done?: () => void) =>
    async (event?: Event): Promise<void> => {
      event?.preventDefault();
      try {
        await work();
        done?.();
        reload();
      } catch (error) {
        onError(error);
      }
    };
  return { version, act, reload };
}
