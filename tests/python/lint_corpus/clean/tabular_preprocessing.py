"""Tabular preprocessing without leakage: label encoding of the target on all rows (class
names are not statistics), a Pipeline, and scalers fitted on the training split only."""

import numpy as np
import torch
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import LabelEncoder, OneHotEncoder, StandardScaler

rng = np.random.default_rng(1)
numeric = rng.normal(size=(500, 3))
numeric[rng.random(numeric.shape) < 0.05] = np.nan
category = rng.integers(0, 4, size=(500, 1))
features = np.hstack([numeric, category])
labels = LabelEncoder().fit_transform(rng.choice(["cat", "dog", "bird"], size=500))

X_train, X_test, y_train, y_test = train_test_split(features, labels, test_size=0.25, stratify=labels)

prep = ColumnTransformer([
    ("num", Pipeline([("impute", SimpleImputer(strategy="median")), ("scale", StandardScaler())]), [0, 1, 2]),
    ("cat", OneHotEncoder(handle_unknown="ignore"), [3]),
])
X_train_t = prep.fit_transform(X_train)
X_test_t = prep.transform(X_test)

imputer = SimpleImputer(strategy="mean")
imputer.fit(X_train[:, :3])
filled_test = imputer.transform(X_test[:, :3])

train_x = torch.as_tensor(np.asarray(X_train_t, dtype=np.float32))
train_y = torch.as_tensor(y_train)
print(train_x.shape, train_y.shape, filled_test.shape, X_test_t.shape)
