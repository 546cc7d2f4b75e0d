-- WI-9: a line said to a Bot in one conversation while its work on the job speaks in another
-- is marked with that conversation ("said to you"); the Bot answers there with send_message.
-- NULL for every other delivery.
ALTER TABLE line_deliveries ADD COLUMN reply_in INTEGER REFERENCES sessions(id);
