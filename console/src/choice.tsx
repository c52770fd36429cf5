/**
 * A labelled choice of one resource by uid (an identity, a role): `none` is the first option, the
 * empty value (a placeholder when `required`, "no choice" otherwise).
 */
export function Choice({ label, value, onChange, items, none, required = false }: { label: string; value: string; onChange: (uid: string) => void; items: ReadonlyArray<{ uid: string; name: string }>; none: string; required?: boolean }) {
  return (
    <label>
      {label}
      <select aria-label={label} value={value} onChange={(e) => onChange(e.currentTarget.value)} required={required}>
        <option value="">{none}</option>
        {items.map((item) => (
          <option key={item.uid} value={item.uid}>
            {item.name}
          </option>
        ))}
      </select>
    </label>
  );
}
