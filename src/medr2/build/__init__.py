"""The build pipeline (DESIGN §12/§13): sources -> cases -> items -> variants -> bench folder."""
