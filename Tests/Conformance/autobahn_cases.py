# Python 2.7 (runs in the Autobahn env): prints how many cases a JSON list of case patterns
# expands to, as wstest itself expands them, so a partial report can be detected.
import json
import sys

from autobahntestsuite.case import Cases, CaseCategories, CaseSubCategories, CaseSetname, CaseBasename
from autobahntestsuite.caseset import CaseSet

case_set = CaseSet(CaseSetname, CaseBasename, Cases, CaseCategories, CaseSubCategories)
print(len(case_set.parseSpecCases({"cases": json.loads(sys.argv[1]), "exclude-cases": []})))
