-- A thread may work in a folder inside a larger one its tools may reach: a job's thread works
-- in its job's folder and reaches the conversation's folder (the person's project) above it.
-- Empty for a thread whose tools reach only its own folder.
ALTER TABLE threads ADD COLUMN workspace_root TEXT;
