#!/usr/bin/env node
import "../dist/install-cni.mjs"
