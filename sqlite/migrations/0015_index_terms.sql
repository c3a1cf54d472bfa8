-- 0015: what the recall index needs of a memory's content, stored at write
-- time so that loading a partition reads compact columns and analyses no
-- text (issue 27).
--
-- index_terms is the memory's content as analysis.Terms sees it, encoded by
-- store.EncodeTerms (its distinct terms in order of first occurrence, each
-- with its count); terms_version is the analysis.TermsVersion it was made
-- with. Both are NULL for a memory written before this version: a load
-- analyses the content of any row whose terms_version is not the running
-- binary's, uses that, and writes the terms back (store.Store.LoadIndex),
-- so the columns fill lazily and a stale or missing value is never used.
-- They are derived from content and deleted with the row, so forget and
-- delete erase them as they erase the content.
ALTER TABLE memories ADD COLUMN index_terms BLOB;
ALTER TABLE memories ADD COLUMN terms_version TEXT;
