// The sync a silent push carries (DESIGN §17), wherever the platform put it.

/**
 * The sync object of a push `payload`, or null when it carries none: APNs userInfo
 * `{ aps, pushhub: { type: "sync", id, seq, … } }`, an FCM data map `{ pushhub: "<JSON text>" }`,
 * or either wrapped in `data` (React Native push modules' message objects). Null too when the
 * object is not a sync with a string `id`.
 */
export function pushedSync(payload) {
  if (payload === null || typeof payload !== "object") return null;
  let value = payload.pushhub;
  if (value === undefined && payload.data !== null && typeof payload.data === "object") value = payload.data.pushhub;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      return null;
    }
  }
  if (value === null || typeof value !== "object" || value.type !== "sync" || typeof value.id !== "string") return null;
  return value;
}
