-- 0014: what the recall index needs of a memory's content, stored at write
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
ALTER TABLE memories ADD COLUMN index_terms bytea, ADD COLUMN terms_version text;

-- A memory with a 384- or 484-dimension vector is a row of about 2.3 kB:
-- past the default 2 kB target, PostgreSQL moved its vector out of line
-- (TOAST; float32 does not compress), so a cold load fetched each vector
-- from the TOAST table by a second lookup. Rows up to a heap page are now
-- kept whole: reading the vectors of 10,000 such rows took 31-52 ms when
-- they were out of line and 13-21 ms inline (BENCHMARKS.md). Rows written
-- before keep their layout until they are written again.
ALTER TABLE memories SET (toast_tuple_target = 8160);
