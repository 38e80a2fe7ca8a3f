-- twilight server schema, migration 11: what each per-host key did.
--
-- token_id: the enrolment token that minted the key (NULL for keys minted
-- before this migration), so enroll-max-keys can cap the live keys of one
-- token (the partial index counts them).
--
-- boot_id, boot_seen, last_seen, prev_boot_id, clone_seen: the boot the
-- key's last report named, when the key first reported that boot, when it
-- last reported (kept to the minute: the writer updates the row when the
-- boot changes or its last_seen is a minute old), the boot before, and
-- when the key came back to the boot before (a boot id never recurs on
-- one machine). Machines cloned from one image share /etc/machine-id and
-- so one host id: two live keys of a host id whose reports of different
-- boots interleave, or one key that returns to its previous boot, are
-- such clones (the health page lists them). Re-enrolment leaves older keys
-- valid, so clones never revoke each other.
ALTER TABLE host_keys ADD COLUMN token_id INT;
ALTER TABLE host_keys ADD COLUMN boot_id TEXT;
ALTER TABLE host_keys ADD COLUMN boot_seen INT;
ALTER TABLE host_keys ADD COLUMN last_seen INT;
ALTER TABLE host_keys ADD COLUMN prev_boot_id TEXT;
ALTER TABLE host_keys ADD COLUMN clone_seen INT;
CREATE INDEX host_keys_token ON host_keys(token_id) WHERE revoked IS NULL;
