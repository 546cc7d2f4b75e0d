-- Boss trees are read from thread parents (BOSS-1): a thread's children are found by index.
CREATE INDEX threads_parent ON threads(parent_id);
