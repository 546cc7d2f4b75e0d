-- Clearing a conversation and deleting a group (HOLD-X1/X2, PLAN-D2/D10/D12): a cleared
-- conversation keeps its lines' rows (blanked in place, so holds still point at them) and
-- says when it was cleared; a deleted group stays as a row too (holds, turns and lines refer
-- to it) but is gone from every listing and read.
ALTER TABLE sessions ADD COLUMN cleared_at INTEGER;
ALTER TABLE sessions ADD COLUMN deleted_at INTEGER;
