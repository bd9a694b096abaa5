/**
 * /console/media: uploads of the scope with image previews, upload, delete.
 * A preview is the bytes fetched with the token and shown from an object URL
 * in an <img> (never an iframe or markup of the file: the server also sends
 * media with a sandboxing CSP and nosniff).
 */
import { useEffect, useState } from 'preact/hooks';
import { blobUrl, rest, session, upload } from '../api.ts';
import { withQuery, type Location } from '../router.ts';
import { ErrorNote, Link, Loading, Time, useAction, useApi } from '../ui.tsx';

interface Media { id: string; filename: string; contentType: string; size: number; sha256: string; createdAt: string }

const PREVIEWABLE = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

function Preview({ media }: { media: Media }) {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    if (!PREVIEWABLE.has(media.contentType)) return;
    let made: string | null = null;
    blobUrl(`/media/${media.id}`).then((u) => { made = u; setUrl(u); }, () => setUrl(null));
    return () => { if (made) URL.revokeObjectURL(made); };
  }, [media.id]);
  if (!PREVIEWABLE.has(media.contentType)) return <span class="muted">no preview</span>;
  return url ? <img src={url} alt={`preview of ${media.filename}`} class="thumb" /> : <span class="muted">…</span>;
}

export function MediaView({ loc }: { loc: Location }) {
  const after = loc.query.get('after') ?? '';
  const page = useApi(() => rest<{ items: Media[]; nextCursor: string | null }>('GET', `/media${after ? `?after=${encodeURIComponent(after)}` : ''}`), `media ${after}`);
  const action = useAction();
  const [note, setNote] = useState('');
  const mayDelete = ['Admin', 'Manager'].includes(session.user?.role ?? '');
  const onUpload = async (event: Event) => {
    event.preventDefault();
    const input = (event.currentTarget as HTMLFormElement).elements.namedItem('file') as HTMLInputElement;
    const file = input.files?.[0];
    if (!file) return;
    if (await action.run(() => upload(file))) { setNote(`Uploaded ${file.name}.`); input.value = ''; page.reload(); }
  };
  const remove = async (m: Media) => {
    if (!confirm(`Delete ${m.filename}?`)) return;
    if (await action.run(() => rest('DELETE', `/media/${m.id}`))) { setNote(`Deleted ${m.filename}.`); page.reload(); }
  };
  return (
    <section>
      <h1>Media</h1>
      <form class="toolbar" onSubmit={onUpload} aria-label="Upload">
        <label for="media-file">File to upload</label>
        <input id="media-file" name="file" type="file" />
        <button type="submit" disabled={action.busy}>Upload</button>
      </form>
      <p class="muted" role="status">{note}</p>
      <ErrorNote error={page.error ?? action.error} />
      <Loading loading={page.loading} />
      <div class="scroll" tabIndex={0}>
        <table>
          <caption class="sr-only">Media</caption>
          <thead><tr><th scope="col">preview</th><th scope="col">file</th><th scope="col">type</th><th scope="col">size</th><th scope="col">uploaded</th><th scope="col">action</th></tr></thead>
          <tbody>
            {page.data?.items.map((m) => (
              <tr key={m.id}>
                <td><Preview media={m} /></td><td>{m.filename}<br /><span class="muted">{m.id}</span></td><td>{m.contentType}</td>
                <td>{m.size} bytes</td><td><Time at={m.createdAt} /></td>
                <td>{mayDelete ? <button type="button" class="danger" onClick={() => remove(m)}>Delete {m.filename}</button> : null}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <nav class="pager" aria-label="Pages">
        {after ? <Link href={withQuery('/media', loc.query, { after: null })}>First page</Link> : null}
        {page.data?.nextCursor ? <Link href={withQuery('/media', loc.query, { after: page.data.nextCursor })}>Next page</Link> : null}
      </nav>
    </section>
  );
}
