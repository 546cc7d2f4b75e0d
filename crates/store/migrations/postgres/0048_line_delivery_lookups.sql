-- Projecting a Bot's message looks up the newest line delivered to its thread, and routing a
-- line looks up every member's thread in the conversation: both read one index entry now
-- instead of every delivery the thread ever had or every thread of the conversation.
DROP INDEX line_deliveries_thread;
CREATE INDEX line_deliveries_thread ON line_deliveries(thread_id, line_id);
DROP INDEX session_threads_session;
CREATE INDEX session_threads_session ON session_threads(session_id, purpose, bot_id, thread_id);
