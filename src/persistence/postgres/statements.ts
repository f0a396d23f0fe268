// The store's SQL, one function per statement, over the quoted schema name `s`.
import type { QueryConfig } from "pg";

/**
 * A named statement: each connection plans it once and then only binds values (measured: a third
 * faster for one-record puts and gets than an unnamed one). Named per schema, as its text is.
 */
export function named(s: string, name: string, text: string, values: unknown[]): QueryConfig {
  return { name: `a2a ${s} ${name}`, text, values };
}

/**
 * A batch put as one statement (so it is atomic without a transaction's extra round trips): each
 * record is inserted, or updated when this process owns it (or both copies are finished, which is
 * final), and only while this process's lease holds (a process whose lease lapsed writes nothing: the
 * others may be taking its actors over); its next due time is set or cleared; when any record cannot be
 * written, not_owned() raises and nothing of the batch is written.
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
  SELECT ${s}.not_owned(array_agg(i.id)) FROM input i
  WHERE NOT EXISTS (SELECT 1 FROM written w WHERE w.id = i.id)
  HAVING count(*) > 0`;

export const registerOwner = (s: string): string =>
  `INSERT INTO ${s}.owners (id, pid, host, lease_until)
   VALUES ($1, $2, $3, clock_timestamp() + $4 * interval '1 millisecond')`;

/** Extends this process's lease, unless it has lapsed already (then its actors may be another's). */
export const renewLease = (s: string): string =>
  `UPDATE ${s}.owners SET lease_until = clock_timestamp() + $2 * interval '1 millisecond'
   WHERE id = $1 AND lease_until > clock_timestamp() RETURNING id`;

/** Owners whose lease lapsed, and whether any live actor has no owner: the cheap check before a claim. */
export const orphanCheck = (s: string): string =>
  `SELECT array(SELECT id FROM ${s}.owners WHERE lease_until < clock_timestamp()) AS dead,
          EXISTS (SELECT 1 FROM ${s}.actors WHERE status = 'active' AND owner IS NULL) AS unowned`;

/**
 * Takes over live actors without a living owner, soonest due first; rows another process is claiming
 * at this moment are skipped, not waited for. $1 owner, $2 limit, $3 the lapsed owners.
 */
export const claimOrphans = (s: string): string => `
  WITH orphans AS (
    SELECT a.id FROM ${s}.actors a LEFT JOIN ${s}.timers t ON t.actor_id = a.id
    WHERE a.status = 'active' AND (a.owner IS NULL OR a.owner = ANY($3::text[]))
    ORDER BY t.due_at NULLS LAST
    LIMIT $2
    FOR UPDATE OF a SKIP LOCKED
  )
  UPDATE ${s}.actors a SET owner = $1 FROM orphans o WHERE a.id = o.id RETURNING a.record`;

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

export const takeInbox = (s: string): string =>
  `SELECT i.seq, i.actor_id, i.event FROM ${s}.inbox i JOIN ${s}.actors a ON a.id = i.actor_id
   WHERE a.owner = $1 AND a.status = 'active' ORDER BY i.seq LIMIT $2`;

/** Lets go of this process's actors (the others claim them on their next poll) and of its lease. */
export const releaseOwner = (s: string): string => `
  WITH released AS (UPDATE ${s}.actors SET owner = NULL WHERE owner = $1 AND status = 'active')
  DELETE FROM ${s}.owners WHERE id = $1`;
