// The store's SQL, one function per statement, over the quoted schema name `s`.
import type { QueryConfig } from "pg";

/** A named statement, per schema: planned once per connection (a third faster for one-record puts and gets). */
export function named(s: string, name: string, text: string, values: unknown[]): QueryConfig {
  return { name: `a2a ${s} ${name}`, text, values };
}

/**
 * A batch put as one statement (atomic without a transaction's round trips): each record inserted, or
 * updated when this process owns it (or both copies are finished), only while its lease holds; its
 * next due time set or cleared. Else nothing is written: lease_lapsed() or not_owned() raises.
 * $1 owner; $2.. the records' columns as arrays.
 */
export const putRecords = (s: string): string => `
  WITH leased AS (
    SELECT 1 FROM ${s}.owners WHERE id = $1 AND lease_until > clock_timestamp()
  ), input AS (
    SELECT * FROM unnest($2::text[], $3::text[], $4::int[], $5::text[], $6::int8[], $7::text[], $8::int8[])
      AS i(id, machine_id, machine_version, status, updated_at, record, due_at)
  ), written AS (
    INSERT INTO ${s}.actors AS a (id, machine_id, machine_version, status, updated_at, record, owner)
    SELECT id, machine_id, machine_version, status, updated_at, record::json,
           CASE WHEN status = 'active' THEN $1 END
    FROM input
    WHERE EXISTS (SELECT 1 FROM leased)
    ON CONFLICT (id) DO UPDATE SET
      machine_id = excluded.machine_id, machine_version = excluded.machine_version, status = excluded.status,
      updated_at = excluded.updated_at, record = excluded.record, owner = excluded.owner
    WHERE (a.owner = $1 OR (a.status <> 'active' AND excluded.status <> 'active')) AND EXISTS (SELECT 1 FROM leased)
    RETURNING a.id
  ), armed AS (
    INSERT INTO ${s}.timers (actor_id, due_at)
    SELECT i.id, i.due_at FROM input i JOIN written w ON w.id = i.id
    WHERE i.status = 'active' AND i.due_at IS NOT NULL
    ON CONFLICT (actor_id) DO UPDATE SET due_at = excluded.due_at
  ), disarmed AS (
    DELETE FROM ${s}.timers t USING input i, written w
    WHERE w.id = i.id AND t.actor_id = i.id AND (i.status <> 'active' OR i.due_at IS NULL)
  )
  SELECT CASE WHEN EXISTS (SELECT 1 FROM leased) THEN ${s}.not_owned(array_agg(i.id)) ELSE ${s}.lease_lapsed() END
  FROM input i
  WHERE NOT EXISTS (SELECT 1 FROM written w WHERE w.id = i.id)
  HAVING count(*) > 0`;

/**
 * Registers this process or extends its lease (a lapsed one too: what others took meanwhile stays
 * theirs), recording the backend of its presence connection. Returns how long ago it had lapsed (null:
 * unknown; negative: it held), whether that backend is another (the last one closed: others may have
 * taken actors over meanwhile), and the server's clock. $1 owner, $2 lease length in ms, $3 pid,
 * $4 host, $5 instance, $6 backend.
 */
export const renewLease = (s: string): string => `
  WITH was AS (SELECT lease_until, backend FROM ${s}.owners WHERE id = $1)
  INSERT INTO ${s}.owners AS o (id, pid, host, instance, lease_until, backend, backend_at)
  VALUES ($1, $3, $4, $5, clock_timestamp() + $2 * interval '1 millisecond', $6, clock_timestamp())
  ON CONFLICT (id) DO UPDATE SET
    lease_until = excluded.lease_until, backend = excluded.backend, backend_at = excluded.backend_at
  RETURNING (SELECT extract(epoch FROM clock_timestamp() - lease_until) * 1000 FROM was)::float8 AS lapsed_ms,
            COALESCE((SELECT backend <> $6 FROM was), false) AS reconnected,
            (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS server_now`;

/**
 * The owners alive: lease held, and presence connection open. A killed process's closes at once, so
 * its actors are taken over at the next poll; one that hangs or is cut off keeps its server end, and
 * its actors wait for the lease. A backend recorded before the server (re)started says nothing.
 */
const living = (s: string): string => `
  SELECT id FROM ${s}.owners o
  WHERE lease_until > clock_timestamp()
    AND NOT (backend_at > pg_postmaster_start_time()
             AND NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = o.backend))`;

/** The earlier owners under this instance name on this host: dead, as the name is held by one process at a time. $1 owner, $2 host, $3 instance. */
export const predecessors = (s: string): string =>
  `SELECT id FROM ${s}.owners WHERE instance = $3 AND host = $2 AND id <> $1`;

/** Other owners not alive, and whether any live actor has no owner: the cheap check before a claim. $1 owner. */
export const orphanCheck = (s: string): string =>
  `SELECT array(SELECT id FROM ${s}.owners WHERE id <> $1 EXCEPT ${living(s)}) AS dead,
          EXISTS (SELECT 1 FROM ${s}.actors WHERE status = 'active' AND owner IS NULL) AS unowned`;

/**
 * Takes over live actors without a living owner, soonest due first, skipping rows being claimed. An
 * owner found dead that lives again since (a lapsed lease renewed) keeps its actors, unless a
 * predecessor. $1 owner, $2 limit, $3 the dead owners and predecessors, $4 the predecessors.
 */
export const claimOrphans = (s: string): string => `
  WITH living AS (${living(s)}), orphans AS (
    SELECT a.id FROM ${s}.actors a LEFT JOIN ${s}.timers t ON t.actor_id = a.id
    WHERE a.status = 'active' AND (a.owner IS NULL OR a.owner = ANY($3::text[]))
      AND NOT EXISTS (SELECT 1 FROM living l WHERE l.id = a.owner AND NOT l.id = ANY($4::text[]))
    ORDER BY t.due_at NULLS LAST
    LIMIT $2
    FOR UPDATE OF a SKIP LOCKED
  )
  UPDATE ${s}.actors a SET owner = $1 FROM orphans o WHERE a.id = o.id RETURNING a.record`;

/** Live actors this process owns but does not know it holds (a claim whose reply was lost). $1 owner, $2 the ids it holds. */
export const ownedUnheld = (s: string): string =>
  `SELECT record FROM ${s}.actors WHERE owner = $1 AND status = 'active' AND NOT id = ANY($2::text[])`;

/** Of the ids this process holds, those it no longer owns (taken over while its lease had lapsed). $1 owner, $2 the ids. */
export const heldElsewhere = (s: string): string =>
  `SELECT h.id FROM unnest($2::text[]) AS h(id)
   WHERE NOT EXISTS (SELECT 1 FROM ${s}.actors a WHERE a.id = h.id AND a.owner = $1 AND a.status = 'active')`;

/** Lapsed owners that no live actor names any more: gone for good. */
export const forgetDeadOwners = (s: string): string =>
  `DELETE FROM ${s}.owners o WHERE lease_until < clock_timestamp() - interval '1 minute'
   AND NOT EXISTS (SELECT 1 FROM ${s}.actors a WHERE a.status = 'active' AND a.owner = o.id)`;

/** Sets aside records a claim found unusable: out of the live actors, into quarantine. $1 owner, $2 ids, $3 problems. */
export const quarantineRecords = (s: string): string => `
  WITH gone AS (
    DELETE FROM ${s}.actors WHERE id = ANY($2::text[]) AND owner = $1 RETURNING id, record
  ), untimed AS (
    DELETE FROM ${s}.timers WHERE actor_id = ANY($2::text[])
  )
  INSERT INTO ${s}.quarantine (id, problem, record)
  SELECT g.id, p.problem, g.record FROM gone g JOIN unnest($2::text[], $3::text[]) AS p(id, problem) ON p.id = g.id`;

/** Events for this process's actors, oldest first, but those its host could not apply last time. $1 owner, $2 limit, $3 seqs to pass over. */
export const takeInbox = (s: string): string =>
  `SELECT i.seq, i.actor_id, i.event FROM ${s}.inbox i JOIN ${s}.actors a ON a.id = i.actor_id
   WHERE a.owner = $1 AND a.status = 'active' AND NOT i.seq = ANY($3::int8[]) ORDER BY i.seq LIMIT $2`;

/** Lets go of this process's actors (the others claim them on their next poll) and of its lease. */
export const releaseOwner = (s: string): string => `
  WITH released AS (UPDATE ${s}.actors SET owner = NULL WHERE owner = $1 AND status = 'active')
  DELETE FROM ${s}.owners WHERE id = $1`;
